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
  private version = 0;
  private loaded = false;
  private stopped = false;
  private consumer: Consumer | undefined;
  /** Pushes that arrived before the initial load finished. */
  private readonly early: ConfigPush[] = [];
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly options: ConfigWatcherOptions) {}

  get currentVersion(): number {
    return this.version;
  }

  get isLoaded(): boolean {
    return this.loaded;
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
    const retryDelayMs = this.options.retryDelayMs ?? 2000;
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
    const byWorkspace = new Map<string, string[]>();
    for (const [type, workspaces] of Object.entries(push.changes ?? {})) {
      if (!watched.has(type)) continue;
      for (const workspace of workspaces ?? []) {
        if (workspace.startsWith('_')) continue;
        byWorkspace.set(workspace, [...(byWorkspace.get(workspace) ?? []), type]);
      }
    }
    // A new workspace: read every watched type, as TrustGraph's WorkspaceProcessor does.
    for (const workspace of push.workspace_changes?.created ?? []) {
      if (!workspace.startsWith('_')) byWorkspace.set(workspace, [...watched]);
    }
    for (const workspace of push.workspace_changes?.deleted ?? []) {
      byWorkspace.delete(workspace);
      if (this.store.delete(workspace)) await this.options.onWorkspaceDeleted(workspace);
    }
    for (const [workspace, types] of byWorkspace) {
      const changed: Record<string, TypeValues> = {};
      for (const type of types) changed[type] = (await this.options.client.values(workspace, type)).values;
      const snapshot = this.store.apply(workspace, changed);
      await this.options.onChange({ workspace, changedTypes: types, snapshot, version: push.version });
    }
    this.version = push.version;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
