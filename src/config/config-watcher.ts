/**
 * Keeps the agent's view of TrustGraph configuration current: subscribe to the config push queue first,
 * then load every workspace's values of the watched types (retrying until the config service answers),
 * then apply each push ("poke") by fetching only the types and workspaces it names (wire.md §2.4–2.5).
 *
 * Changes are applied one at a time, in version order; a push at or below the current version is ignored.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { queueToTopic } from '../bus/topics.js';
import type { Consumer, IncomingMessage, Transport } from '../bus/transport.js';
import { configPushCodec, type ConfigPush } from '../wire/index.js';
import type { ConfigClient } from './config-client.js';
import { WorkspaceConfigStore, type TypeValues, type WorkspaceSnapshot } from './workspace-config.js';

export interface WorkspaceChange {
  workspace: string;
  /** Only the types this change fetched. */
  changedTypes: readonly string[];
  /** Every watched type's last known values in the workspace. */
  snapshot: WorkspaceSnapshot;
  version: number;
}

export interface ConfigWatcherOptions {
  transport: Transport;
  client: ConfigClient;
  pushQueue: string;
  /** The config types this agent reads (`processor:<id>`, `tool`, `tool-service`, ...). */
  types: readonly string[];
  onChange(change: WorkspaceChange): Promise<void> | void;
  onWorkspaceDeleted(workspace: string): Promise<void> | void;
  logger: Logger;
  /** Delay between attempts of the initial load (TrustGraph: 2 s). */
  retryDelayMs?: number;
}

export class ConfigWatcher {
  readonly store = new WorkspaceConfigStore();
  /** Newest version announced; pushes at or below it are ignored. */
  private version = 0;
  /** Newest version whose changes are all applied. */
  private applied = 0;
  private loaded = false;
  private stopped = false;
  private consumer: Consumer | undefined;
  /** Pushes that arrived before the initial load finished. */
  private readonly early: ConfigPush[] = [];
  private queue: Promise<void> = Promise.resolve();
  /** Changes announced by a push whose values could not be fetched yet: workspace → types. */
  private readonly stale = new Map<string, Set<string>>();
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: ConfigWatcherOptions) {}

  /** The configuration version in use: every change up to it is applied. */
  get currentVersion(): number {
    return this.applied;
  }

  get isLoaded(): boolean {
    return this.loaded;
  }

  /** Workspaces with announced changes not fetched yet (the config service did not answer). */
  get pendingWorkspaces(): string[] {
    return [...this.stale.keys()].sort();
  }

  private get retryDelayMs(): number {
    return this.options.retryDelayMs ?? 2000;
  }

  /** Subscribe, then load; resolves once the first load succeeded (or `stop()` was called). */
  async start(): Promise<void> {
    this.consumer = await this.options.transport.subscribe({
      topic: queueToTopic(this.options.pushQueue),
      subscription: randomUUID(),
      subscriptionType: 'Exclusive',
      handler: (message) => this.onPushMessage(message),
    });
    await this.options.client.start();
    const retryDelayMs = this.retryDelayMs;
    for (let attempt = 1; !this.stopped; attempt++) {
      try {
        await this.loadAll();
        break;
      } catch (error) {
        this.options.logger.warn(
          { err: error, attempt },
          `Config load failed; retrying in ${retryDelayMs} ms (is TrustGraph's config service running?)`,
        );
        await sleep(retryDelayMs);
      }
    }
    this.loaded = !this.stopped;
    const pending = this.early.splice(0).sort((a, b) => a.version - b.version);
    for (const push of pending) this.enqueue(() => this.applyPush(push));
    await this.queue;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.consumer?.close();
    await this.options.client.close();
  }

  private async loadAll(): Promise<void> {
    const { client } = this.options;
    const workspaces = new Set<string>();
    let version = 0;
    for (const type of this.options.types) {
      const found = await client.workspacesWith(type);
      found.workspaces.forEach((ws) => workspaces.add(ws));
      version = Math.max(version, found.version);
    }
    const loaded = new Map<string, Record<string, TypeValues>>();
    for (const workspace of [...workspaces].sort()) {
      const types: Record<string, TypeValues> = {};
      for (const type of this.options.types) {
        const result = await client.values(workspace, type);
        types[type] = result.values;
        version = Math.max(version, result.version);
      }
      loaded.set(workspace, types);
    }
    this.version = version;
    this.applied = version;
    for (const [workspace, types] of loaded) {
      const snapshot = this.store.apply(workspace, types);
      await this.options.onChange({ workspace, changedTypes: Object.keys(types), snapshot, version });
    }
    this.options.logger.info({ version, workspaces: [...loaded.keys()] }, 'Configuration loaded');
  }

  private onPushMessage(message: IncomingMessage): void {
    let push: ConfigPush;
    try {
      push = configPushCodec.decode(message.payload);
    } catch (error) {
      this.options.logger.error({ err: error, topic: message.topic }, 'Ignoring a config push that cannot be decoded');
      return;
    }
    if (!this.loaded) {
      this.early.push(push);
      return;
    }
    this.enqueue(() => this.applyPush(push));
  }

  private enqueue(task: () => Promise<void>): void {
    this.queue = this.queue.then(task).catch((error: unknown) => {
      this.options.logger.error({ err: error }, 'Applying a config change failed; the previous configuration stays');
    });
  }

  private async applyPush(push: ConfigPush): Promise<void> {
    if (push.version <= this.version) {
      this.options.logger.debug({ version: push.version, current: this.version }, 'Ignoring an old config push');
      return;
    }
    const watched = new Set(this.options.types);
    for (const [type, workspaces] of Object.entries(push.changes ?? {})) {
      if (!watched.has(type)) continue;
      for (const workspace of workspaces ?? []) {
        if (!workspace.startsWith('_')) this.markStale(workspace, [type]);
      }
    }
    // A new workspace: read every watched type, as TrustGraph's WorkspaceProcessor does.
    for (const workspace of push.workspace_changes?.created ?? []) {
      if (!workspace.startsWith('_')) this.markStale(workspace, [...watched]);
    }
    for (const workspace of push.workspace_changes?.deleted ?? []) {
      this.stale.delete(workspace);
      if (this.store.delete(workspace)) await this.options.onWorkspaceDeleted(workspace);
    }
    this.version = push.version;
    await this.fetchStale();
  }

  private markStale(workspace: string, types: readonly string[]): void {
    const set = this.stale.get(workspace) ?? new Set<string>();
    types.forEach((t) => set.add(t));
    this.stale.set(workspace, set);
  }

  /**
   * Fetch every (workspace, type) a push announced and not yet fetched. A failed fetch (config service
   * away) stays pending and is retried, so no announced change is lost; readiness reports it meanwhile.
   */
  private async fetchStale(): Promise<void> {
    for (const [workspace, typeSet] of [...this.stale]) {
      const types = [...typeSet];
      const changed: Record<string, TypeValues> = {};
      try {
        for (const type of types) changed[type] = (await this.options.client.values(workspace, type)).values;
      } catch (error) {
        this.options.logger.warn(
          { err: error, workspace, types },
          `Could not fetch changed configuration; retrying in ${this.retryDelayMs} ms`,
        );
        continue;
      }
      this.stale.delete(workspace);
      const snapshot = this.store.apply(workspace, changed);
      await this.options.onChange({ workspace, changedTypes: types, snapshot, version: this.version });
    }
    if (this.stale.size === 0) this.applied = this.version;
    if (this.stale.size > 0 && !this.retryTimer && !this.stopped) {
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        this.enqueue(() => this.fetchStale());
      }, this.retryDelayMs);
      this.retryTimer.unref();
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
