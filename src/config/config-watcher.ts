/**
 * Keeps the agent's view of TrustGraph configuration current: subscribe to the config push queue first,
 * then load every workspace's values of the watched types (retrying until the config service answers),
 * then apply each push ("poke") by fetching only the types and workspaces it names (docs/trustgraph-wire-notes.md §2.4–2.5).
 *
 * Changes are applied one at a time, in version order; a push at or below the current version is ignored.
 *
 * The agent may start before the broker (any cluster start): subscribing is retried with a bounded backoff
 * for as long as the broker takes, and `waitingFor` says what it waits for meanwhile (for /readyz).
 *
 * Pushes travel on a non-persistent topic: one published while the broker connection is down is lost. So
 * after the transport reconnects, every watched type of every workspace is read again (a resync), and any
 * change announced while we were away is applied; a failed resync is retried until it succeeds.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { type Consumer, type IncomingMessage, queueToTopic, type Transport, type TransportStatus, untilBrokerUp } from '../bus/index.js';
import { fixedBackoff, retry, type RetryOptions, RetryTimer } from '../retry/index.js';
import { configPushCodec, type ConfigPush } from '../wire/index.js';
import type { ConfigClient } from './config-client.js';
import { WorkspaceConfigStore, type TypeValues, type WorkspaceSnapshot } from './workspace-config.js';
import { errorMessage } from '../errors/index.js';

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
  /** Longest wait between attempts to reach a broker that is not up yet. Default 5 s. */
  brokerRetryMaxMs?: number;
}

export class ConfigWatcher {
  readonly store = new WorkspaceConfigStore();
  /** Newest version announced; pushes at or below it are ignored. */
  private version = 0;
  /** Newest version whose changes are all applied. */
  private applied = 0;
  private loaded = false;
  /** What the first load waits for (the broker, the config service); undefined once loaded. */
  private waiting: string | undefined = 'the broker';
  private failure: string | undefined;
  private stopped = false;
  private consumer: Consumer | undefined;
  /** Pushes that arrived before the initial load finished. */
  private readonly early: ConfigPush[] = [];
  private queue: Promise<void> = Promise.resolve();
  /** Changes announced by a push whose values could not be fetched yet: workspace → types. */
  private readonly stale = new Map<string, Set<string>>();
  /** Retries of changed-config fetches that failed (the config service did not answer). */
  private readonly fetchRetries: RetryTimer;
  private stopListening: (() => void) | undefined;
  /** The transport epoch whose configuration has been read (a later epoch may have lost pushes). */
  private readEpoch = 0;
  /** A resync is due (after a reconnect) and has not succeeded yet. */
  private resyncDue = false;
  private readonly resyncRetries: RetryTimer;
  /** Aborted by stop(): ends the initial load's wait between attempts. */
  private readonly stopping = new AbortController();

  constructor(private readonly options: ConfigWatcherOptions) {
    this.fetchRetries = new RetryTimer(fixedBackoff(this.retryDelayMs));
    this.resyncRetries = new RetryTimer(fixedBackoff(this.retryDelayMs));
  }

  /** The configuration version in use: every change up to it is applied. */
  get currentVersion(): number {
    return this.applied;
  }

  get isLoaded(): boolean {
    return this.loaded;
  }

  /** Before the first load: what it is waiting for and the latest reason, e.g. `the broker: connect ECONNREFUSED`. */
  get waitingFor(): string | undefined {
    return this.loaded ? undefined : this.waiting;
  }

  /** Why the latest config change could not be applied; undefined once one is applied again. */
  get applyFailure(): string | undefined {
    return this.failure;
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
    this.readEpoch = this.options.transport.status().epoch;
    this.stopListening = this.options.transport.onStatus((status) => this.onStatus(status));
    await this.unlessStopped(
      untilBrokerUp(() => this.connect(), {
        signal: this.stopping.signal,
        ...(this.options.brokerRetryMaxMs !== undefined ? { maxDelayMs: this.options.brokerRetryMaxMs } : {}),
        onRetry: ({ error, attempt, delayMs }) => {
          this.waiting = `the broker: ${errorMessage(error)}`;
          this.options.logger.warn(
            { err: errorMessage(error), attempt },
            `Broker not ready for the agent yet; trying again in ${delayMs} ms (the agent waits for it however long it takes)`,
          );
        },
      }),
    );
    this.waiting = "TrustGraph's config service";
    const retryDelayMs = this.retryDelayMs;
    // In a cluster start the config service subscribes after the broker is up: a request sent before that is
    // lost. So the first ten attempts wait 1 s for an answer, then 1.5 s, 2.25 s, ... (×1.5) up to
    // --config-timeout, instead of the whole --config-timeout each (TrustGraph's default: 60 s): a config
    // service that comes up late is asked again within seconds, and a slow one still gets the whole timeout.
    const timeoutOf = (attempt: number): number =>
      Math.min(this.options.client.timeoutMs, attempt <= 10 ? 1000 : Math.round(1000 * 1.5 ** Math.min(attempt - 10, 30)));
    await this.untilStopped((attempt) => this.loadAll(timeoutOf(attempt)), {
      backoff: fixedBackoff(retryDelayMs),
      onRetry: ({ error, attempt }) => {
        this.waiting = `TrustGraph's config service: ${errorMessage(error)}`;
        // The reason without a stack: this is expected while TrustGraph's config service comes up.
        this.options.logger.warn(
          { err: errorMessage(error), attempt },
          `Config load failed; retrying in ${retryDelayMs} ms (is TrustGraph's config service running?)`,
        );
      },
    });
    this.loaded = !this.stopped;
    // A connection lost during the initial load may have taken pushes with it.
    this.onStatus(this.options.transport.status());
    const pending = this.early.splice(0).sort((a, b) => a.version - b.version);
    for (const push of pending) this.enqueue(() => this.applyPush(push));
    await this.queue;
  }

  /** The push consumer and the config client's reply subscription; a retry redoes only what is missing. */
  private async connect(): Promise<void> {
    this.consumer ??= await this.options.transport.subscribe({
      topic: queueToTopic(this.options.pushQueue),
      subscription: randomUUID(),
      subscriptionType: 'Exclusive',
      handler: (message) => this.onPushMessage(message),
    });
    await this.options.client.start();
  }

  /** Retry `step` until it succeeds or stop() is called; only a failure that retryIf refuses rejects. */
  private async untilStopped(step: (attempt: number) => Promise<void>, options: Omit<RetryOptions, 'signal'>): Promise<void> {
    if (this.stopped) return;
    const retryIf = options.retryIf;
    await this.unlessStopped(
      retry(step, {
        ...options,
        retryIf: (error, attempt) => !this.stopped && (retryIf?.(error, attempt) ?? true),
        signal: this.stopping.signal,
      }),
    );
  }

  /** `work`, whose failure is the caller's unless stop() was called meanwhile (a retry that stop() ended). */
  private async unlessStopped(work: Promise<unknown>): Promise<void> {
    try {
      await work;
    } catch (error) {
      if (!this.stopped) throw error;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    this.fetchRetries.stop();
    this.resyncRetries.stop();
    this.stopListening?.();
    await this.consumer?.close();
    await this.options.client.close();
  }

  private async loadAll(timeoutMs?: number): Promise<void> {
    const { loaded, version } = await this.fetchAll(timeoutMs);
    this.version = version;
    this.applied = version;
    for (const [workspace, types] of loaded) {
      const snapshot = this.store.apply(workspace, types);
      await this.options.onChange({ workspace, changedTypes: Object.keys(types), snapshot, version });
    }
    this.options.logger.info({ version, workspaces: [...loaded.keys()] }, 'Configuration loaded');
  }

  /**
   * Every watched type of every workspace that has any. The version is the lowest any answer carried: a
   * change that happened while reading (its push has a higher version) is applied again afterwards.
   */
  private async fetchAll(timeoutMs?: number): Promise<{ loaded: Map<string, Record<string, TypeValues>>; version: number }> {
    const { client } = this.options;
    const call = timeoutMs === undefined ? {} : { timeoutMs };
    const workspaces = new Set<string>();
    let version = Number.POSITIVE_INFINITY;
    for (const type of this.options.types) {
      const found = await client.workspacesWith(type, call);
      found.workspaces.forEach((ws) => workspaces.add(ws));
      version = Math.min(version, found.version);
    }
    const loaded = new Map<string, Record<string, TypeValues>>();
    for (const workspace of [...workspaces].sort()) {
      const types: Record<string, TypeValues> = {};
      for (const type of this.options.types) {
        const result = await client.values(workspace, type, call);
        types[type] = result.values;
        version = Math.min(version, result.version);
      }
      loaded.set(workspace, types);
    }
    return { loaded, version: Number.isFinite(version) ? version : 0 };
  }

  /** Once the transport is whole after a lost connection, pushes sent meanwhile are gone: read everything again. */
  private onStatus(status: TransportStatus): void {
    if (this.stopped || !this.loaded || !status.connected || status.epoch === this.readEpoch) return;
    this.readEpoch = status.epoch;
    this.resyncDue = true;
    this.options.logger.info('Broker connection restored; re-reading the configuration (config pushes may have been lost)');
    this.enqueue(() => this.resync());
  }

  /** Re-read everything and apply it as one change per workspace; retried until it succeeds. */
  private async resync(): Promise<void> {
    if (!this.resyncDue || this.stopped) return;
    let fetched: Awaited<ReturnType<ConfigWatcher['fetchAll']>>;
    try {
      fetched = await this.fetchAll();
    } catch (error) {
      this.options.logger.warn({ err: error }, `Re-reading the configuration failed; retrying in ${this.retryDelayMs} ms`);
      this.resyncRetries.retryLater(() => this.enqueue(() => this.resync()));
      return;
    }
    this.resyncDue = false;
    const { loaded } = fetched;
    const version = Math.max(this.version, fetched.version);
    const known = new Set(this.store.workspaceNames());
    const changedWorkspaces: string[] = [];
    for (const workspace of [...new Set([...known, ...loaded.keys()])].sort()) {
      // A workspace with nothing of ours left reads as empty values of every type.
      const values = loaded.get(workspace) ?? Object.fromEntries(this.options.types.map((t) => [t, {}]));
      const changedTypes = known.has(workspace)
        ? this.options.types.filter((t) => !sameValues(this.store.values(workspace, t), values[t] ?? {}))
        : [...this.options.types];
      this.stale.delete(workspace);
      if (changedTypes.length === 0) continue;
      changedWorkspaces.push(workspace);
      const changed = Object.fromEntries(changedTypes.map((t) => [t, values[t] ?? {}]));
      const snapshot = this.store.apply(workspace, changed);
      await this.options.onChange({ workspace, changedTypes, snapshot, version });
    }
    this.version = version;
    if (this.stale.size === 0) this.applied = version;
    this.options.logger.info({ version, changed: changedWorkspaces }, 'Configuration re-read after a reconnect');
  }

  /**
   * Every push is acknowledged, decodable or not: the broker stops delivering to a subscription once 1000
   * messages are unacknowledged (the WebSocket API's default), which would end all config updates.
   */
  private onPushMessage(message: IncomingMessage): Promise<void> {
    let push: ConfigPush | undefined;
    try {
      push = configPushCodec.decode(message.payload);
    } catch (error) {
      this.options.logger.error({ err: error, topic: message.topic }, 'Ignoring a config push that cannot be decoded');
    }
    if (push && !this.loaded) this.early.push(push);
    else if (push) {
      const decoded = push;
      this.enqueue(() => this.applyPush(decoded));
    }
    return message.ack().catch((error: unknown) => this.options.logger.debug({ err: error }, 'Acknowledging a config push failed'));
  }

  private enqueue(task: () => Promise<void>): void {
    this.queue = this.queue.then(task).then(
      () => {
        this.failure = undefined;
      },
      (error: unknown) => {
        this.failure = errorMessage(error);
        this.options.logger.error({ err: error }, 'Applying a config change failed; the previous configuration stays');
      },
    );
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
      this.options.client.forget(workspace, this.options.types);
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
    if (this.stale.size > 0) this.fetchRetries.retryLater(() => this.enqueue(() => this.fetchStale()));
  }
}

function sameValues(a: TypeValues, b: TypeValues): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key]);
}
