/**
 * MCP argument discovery (design decision 9 (docs/design.md), opt-in with `--mcp-discovery`): reads each workspace's `mcp`
 * config, asks every MCP server it names for `tools/list` in the background, and keeps a snapshot per
 * workspace — `mcp` key → the tool's compiled input schema, "pending" or the failure — that the registry
 * builder reads synchronously. Requests never wait on it; a server that is down, slow or returns a
 * malformed schema only changes the snapshot (the tool falls back to its declared arguments, or none).
 *
 * Answers are kept for `ttlMs` and fetched again after; failures are retried after `retryMs`; a change of
 * the `mcp` config refreshes the workspace's servers at once. When a snapshot changes, `onChange(workspace)`
 * asks for the workspace's registry to be rebuilt. Servers are asked once per distinct (url, token) per
 * workspace, however many entries share them.
 */
import type { Logger } from 'pino';
import type { WorkspaceChange } from '../config/index.js';
import { errorMessage, quote } from '../errors/index.js';
import { DiscoveryCache, type CacheState } from './discovery-cache.js';
import { McpDiscoveryError, type DiscoveryFailureReason } from './errors.js';
import { discoveryFingerprint, type McpDiscoveryLookup, type McpToolDiscovery } from './discovery-result.js';
import { MCP_CONFIG_TYPE, parseMcpConfig, redactUrl, type McpConfig, type McpServerEntry } from './mcp-config.js';
import { SchemaCompiler } from './schema-arguments.js';
import { hideSecrets, listMcpTools, type ListedMcpTool, type McpEndpoint, type ToolsLister } from './tools-list-client.js';

export interface McpDiscoveryOptions {
  /** How long a server's answer is used. */
  readonly ttlMs: number;
  /** Deadline of one `tools/list` exchange. */
  readonly timeoutMs: number;
  /** Delay before asking a failed server again. Default: the TTL, at most 30 s. */
  readonly retryMs?: number;
  readonly logger: Logger;
  /** Called when a workspace's snapshot changed: rebuild its registry. */
  readonly onChange: (workspace: string) => void;
  /** Metrics of discovery. */
  readonly telemetry: DiscoveryTelemetry;
  /** Default: the MCP SDK client (`tools-list-client.ts`). */
  readonly list?: ToolsLister;
  readonly compiler?: SchemaCompiler;
  readonly now?: () => number;
  /** Exchanges running at once, over every workspace. Default 8. */
  readonly maxConcurrent?: number;
  /** How often due servers are looked for. Default: a quarter of the retry delay, 100 ms … 5 s. */
  readonly tickMs?: number;
}

/** What discovery reports for metrics. Every method is required (`noTelemetry` records nothing). */
export interface DiscoveryTelemetry {
  /** Once per `mcp` entry per failed attempt. */
  discoveryFailed(workspace: string, mcpKey: string, reason: DiscoveryFailureReason): void;
  /** After every snapshot update: the number of entries currently failing. */
  discoveryStatus(workspace: string, failing: number): void;
}

type EndpointState = CacheState<readonly ListedMcpTool[]>;

interface WorkspaceDiscovery {
  config: McpConfig;
  readonly cache: DiscoveryCache<string, readonly ListedMcpTool[]>;
  lookup: McpDiscoveryLookup;
  fingerprints: ReadonlyMap<string, string>;
}

/** One entry of the discovery listing at /tools/<workspace>. */
export interface McpEntryListing {
  readonly key: string;
  readonly url: string;
  readonly remoteName: string;
  /** Whether a bearer token is configured (never the token). */
  readonly auth: boolean;
  readonly status: McpToolDiscovery['status'];
  readonly reason: DiscoveryFailureReason | null;
  readonly error: string | null;
  /** Last answer or failure (ISO time), and the next planned attempt. */
  readonly checkedAt: string | null;
  readonly nextCheckAt: string | null;
  readonly refreshing: boolean;
  /** The discovered arguments, prompt form, when `status` is `ok`. */
  readonly arguments: readonly { name: string; type: string; description: string; required: boolean }[] | null;
}

export interface McpDiscoveryListing {
  readonly enabled: true;
  readonly ttlSeconds: number;
  readonly timeoutSeconds: number;
  readonly entries: readonly McpEntryListing[];
  /** Invalid `mcp` entries. */
  readonly problems: readonly string[];
}

const EMPTY_LOOKUP: McpDiscoveryLookup = new Map();

/** Endpoint identity inside one workspace. The token is part of it (another token may see other tools); kept in memory only. */
function endpointKey(entry: McpServerEntry): string {
  return `${entry.url}\u0000${entry.authToken ?? ''}`;
}

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

export class McpDiscovery {
  private readonly workspaces = new Map<string, WorkspaceDiscovery>();
  private readonly list: ToolsLister;
  private readonly compiler: SchemaCompiler;
  private readonly now: () => number;
  private readonly retryMs: number;
  private readonly maxConcurrent: number;
  private readonly running = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly options: McpDiscoveryOptions) {
    this.list = options.list ?? listMcpTools;
    this.compiler = options.compiler ?? new SchemaCompiler();
    this.now = options.now ?? Date.now;
    this.retryMs = options.retryMs ?? Math.min(options.ttlMs, 30_000);
    this.maxConcurrent = options.maxConcurrent ?? 8;
  }

  /** Start the periodic refresh (TTL expiry, retries). */
  start(): void {
    if (this.timer !== undefined || this.stopped) return;
    const tickMs = this.options.tickMs ?? Math.min(5000, Math.max(100, Math.floor(this.retryMs / 4)));
    this.timer = setInterval(() => this.kick(), tickMs);
    this.timer.unref();
  }

  /** Stop refreshing and abandon running exchanges. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.abort.abort(new DOMException('MCP discovery stopped', 'AbortError'));
    await Promise.allSettled([...this.running]);
  }

  /** The config watcher's change (`ServiceHooks.onConfig`): re-read `mcp` when it changed. */
  onConfig(change: WorkspaceChange): void {
    if (!change.changedTypes.includes(MCP_CONFIG_TYPE) || this.stopped) return;
    const { workspace } = change;
    const config = parseMcpConfig(workspace, change.snapshot[MCP_CONFIG_TYPE]);
    for (const problem of config.problems) {
      this.options.logger.error({ workspace, mcpKey: problem.key }, `MCP configuration problem: ${problem.text}`);
      this.options.telemetry.discoveryFailed(workspace, problem.key, 'bad-config');
    }
    let state = this.workspaces.get(workspace);
    if (state === undefined) {
      state = {
        config,
        cache: new DiscoveryCache({ ttlMs: this.options.ttlMs, retryMs: this.retryMs, now: this.now }),
        lookup: EMPTY_LOOKUP,
        fingerprints: new Map(),
      };
      this.workspaces.set(workspace, state);
    }
    state.config = config;
    const endpoints = new Set([...config.entries.values()].map(endpointKey));
    state.cache.retain(endpoints);
    // Operators change `mcp` entries when servers change: ask again now, keeping the last answers meanwhile.
    for (const key of endpoints) state.cache.invalidate(key);
    this.update(workspace, state, true);
    this.kick();
  }

  onWorkspaceDeleted(workspace: string): void {
    this.workspaces.delete(workspace);
  }

  /**
   * The workspace's snapshot for the registry builder; undefined until its `mcp` config has been read (the
   * registry is then built as without discovery, and rebuilt when the snapshot appears).
   */
  lookup(workspace: string): McpDiscoveryLookup | undefined {
    return this.workspaces.get(workspace)?.lookup;
  }

  /** Start every due exchange (up to the concurrency limit). */
  kick(): void {
    if (this.stopped) return;
    for (const [workspace, state] of this.workspaces) {
      for (const entry of this.endpointsOf(state)) {
        if (this.running.size >= this.maxConcurrent) return;
        const key = endpointKey(entry);
        if (!state.cache.isDue(key) || !state.cache.begin(key)) continue;
        const run = this.fetch(workspace, state, key, entry).finally(() => {
          this.running.delete(run);
          this.kick();
        });
        this.running.add(run);
      }
    }
  }

  /** Ask every server of a workspace (or of all workspaces) again now and wait for the answers. */
  async refresh(workspace?: string): Promise<void> {
    for (const [name, state] of this.workspaces) {
      if (workspace !== undefined && name !== workspace) continue;
      for (const key of state.cache.keys()) state.cache.invalidate(key);
    }
    this.kick();
    await this.idle();
  }

  /** Resolves when no exchange is running (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  listing(workspace: string): McpDiscoveryListing {
    const state = this.workspaces.get(workspace);
    const base = { enabled: true as const, ttlSeconds: this.options.ttlMs / 1000, timeoutSeconds: this.options.timeoutMs / 1000 };
    if (state === undefined) return { ...base, entries: [], problems: [] };
    const entries: McpEntryListing[] = [];
    for (const entry of state.config.entries.values()) {
      const key = endpointKey(entry);
      const discovery = state.lookup.get(entry.key);
      const cached = state.cache.state(key);
      const next = state.cache.nextDueAt(key);
      entries.push({
        key: entry.key,
        url: redactUrl(entry.url),
        remoteName: entry.remoteName,
        auth: entry.authToken !== undefined,
        status: discovery?.status ?? 'pending',
        reason: discovery?.status === 'failed' ? discovery.reason : null,
        error: discovery?.status === 'failed' ? discovery.error : null,
        checkedAt: iso(cached.status === 'ok' ? cached.fetchedAt : cached.status === 'failed' ? cached.failedAt : undefined),
        nextCheckAt: iso(next),
        refreshing: state.cache.isInFlight(key),
        arguments: discovery?.status === 'ok' ? discovery.schema.arguments : null,
      });
    }
    return { ...base, entries, problems: state.config.problems.map((p) => p.text) };
  }

  private endpointsOf(state: WorkspaceDiscovery): McpServerEntry[] {
    const seen = new Set<string>();
    const out: McpServerEntry[] = [];
    for (const entry of state.config.entries.values()) {
      const key = endpointKey(entry);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(entry);
    }
    return out;
  }

  private async fetch(workspace: string, state: WorkspaceDiscovery, key: string, entry: McpServerEntry): Promise<void> {
    const endpoint: McpEndpoint = { url: entry.url, authToken: entry.authToken };
    const before = state.cache.state(key);
    try {
      // A lister that ignores the signal must not hold up stop(): the exchange ends when discovery stops.
      const tools = await untilAborted(this.list(endpoint, { timeoutMs: this.options.timeoutMs, signal: this.abort.signal }), this.abort.signal);
      if (this.stopped) return;
      state.cache.succeed(key, Object.freeze([...tools]));
      if (before.status === 'failed') {
        this.options.logger.info({ workspace, url: redactUrl(entry.url) }, `MCP server ${redactUrl(entry.url)} answers tools/list again`);
      }
    } catch (error) {
      if (this.stopped) return;
      const failure =
        error instanceof McpDiscoveryError
          ? error
          : new McpDiscoveryError('protocol', `tools/list of ${redactUrl(entry.url)} failed: ${hideSecrets(errorMessage(error), endpoint)}`);
      state.cache.fail(key, failure);
      const after = state.cache.state(key);
      const repeated = before.status === 'failed' && before.error.reason === failure.reason;
      const retryIn = Math.round(this.retryMs / 1000);
      const log = repeated ? this.options.logger.debug.bind(this.options.logger) : this.options.logger.warn.bind(this.options.logger);
      log(
        { workspace, url: redactUrl(entry.url), reason: failure.reason, failures: after.status === 'failed' ? after.failures : 1 },
        `MCP discovery failed: ${failure.message}; tools of this server use their declared arguments (or none); retrying in ${retryIn} s`,
      );
    }
    if (this.workspaces.get(workspace) !== state) return; // workspace deleted meanwhile
    this.update(workspace, state, false);
    for (const mcpEntry of state.config.entries.values()) {
      if (endpointKey(mcpEntry) !== key) continue;
      const discovery = state.lookup.get(mcpEntry.key);
      if (discovery?.status === 'failed') this.options.telemetry.discoveryFailed(workspace, mcpEntry.key, discovery.reason);
    }
  }

  /** Recompute the workspace's snapshot; log what changed; ask for a rebuild when anything did. */
  private update(workspace: string, state: WorkspaceDiscovery, force: boolean): void {
    const lookup = new Map<string, McpToolDiscovery>();
    for (const problem of state.config.problems) {
      if (lookup.has(problem.key)) continue;
      lookup.set(problem.key, {
        status: 'failed',
        mcpKey: problem.key,
        remoteName: problem.key,
        url: '',
        reason: 'bad-config',
        error: `the mcp entry is invalid: ${problem.text}`,
        failedAt: this.now(),
      });
    }
    for (const entry of state.config.entries.values()) {
      lookup.set(entry.key, this.discoveryOf(entry, state.cache.state(endpointKey(entry))));
    }
    const fingerprints = new Map([...lookup].map(([key, d]) => [key, discoveryFingerprint(d)] as const));
    let changed = fingerprints.size !== state.fingerprints.size;
    for (const [key, fingerprint] of fingerprints) {
      const previous = state.fingerprints.get(key);
      if (previous === fingerprint) continue;
      changed = true;
      this.logTransition(workspace, lookup.get(key)!, previous === undefined ? undefined : state.lookup.get(key));
    }
    state.fingerprints = fingerprints;
    state.lookup = lookup;
    this.options.telemetry.discoveryStatus(workspace, [...lookup.values()].filter((d) => d.status === 'failed').length);
    if (changed || force) this.notify(workspace);
  }

  private notify(workspace: string): void {
    try {
      this.options.onChange(workspace);
    } catch (error) {
      this.options.logger.error({ err: error, workspace }, 'Rebuilding the tool registry after MCP discovery failed');
    }
  }

  private discoveryOf(entry: McpServerEntry, cached: EndpointState): McpToolDiscovery {
    const common = { mcpKey: entry.key, remoteName: entry.remoteName, url: redactUrl(entry.url) };
    if (cached.status === 'pending') return { ...common, status: 'pending' };
    if (cached.status === 'failed') {
      return { ...common, status: 'failed', reason: cached.error.reason, error: cached.error.message, failedAt: cached.failedAt };
    }
    const tool = cached.value.find((t) => t.name === entry.remoteName);
    if (tool === undefined) {
      const names = cached.value.map((t) => t.name);
      const listed = names.length === 0 ? 'it lists no tools' : `it lists: ${names.slice(0, 20).join(', ')}${names.length > 20 ? ', …' : ''}`;
      return {
        ...common,
        status: 'failed',
        reason: 'tool-not-listed',
        error:
          `MCP server ${common.url} does not list a tool named ${quote(entry.remoteName)} (${listed}); ` +
          `check "remote-name" of mcp entry ${quote(entry.key)} (default: the key)`,
        failedAt: cached.fetchedAt,
      };
    }
    const compiled = this.compiler.compile(tool.inputSchema);
    if (!compiled.ok) {
      return {
        ...common,
        status: 'failed',
        reason: 'malformed-schema',
        error:
          `the input schema of MCP tool ${quote(entry.remoteName)} on ${common.url} is unusable: ${compiled.message}; ` +
          `fix the tool on the server, or declare the tool's arguments in its config`,
        failedAt: cached.fetchedAt,
      };
    }
    return { ...common, status: 'ok', schema: compiled.schema, description: tool.description ?? null, fetchedAt: cached.fetchedAt };
  }

  private logTransition(workspace: string, now: McpToolDiscovery, before: McpToolDiscovery | undefined): void {
    const logger = this.options.logger;
    const fields = { workspace, mcpKey: now.mcpKey, remoteName: now.remoteName, url: now.url };
    if (now.status === 'ok') {
      const names = now.schema.arguments.map((a) => a.name).join(', ') || 'none';
      const verb = before?.status === 'ok' ? 'changed' : 'discovered';
      logger.info(fields, `MCP tool ${quote(now.remoteName)} input schema ${verb}; arguments: ${names}`);
    } else if (now.status === 'failed' && (now.reason === 'tool-not-listed' || now.reason === 'malformed-schema')) {
      logger.warn({ ...fields, reason: now.reason }, `MCP discovery failed: ${now.error}`);
    }
  }
}

/** `work`, or a rejection with the signal's reason as soon as `signal` aborts. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
