/**
 * The agent service: configuration → per-workspace tool registries → running flows → iterations.
 * Everything it needs is passed in (transport, logger, hooks), so tests run the real service in-process.
 */
import {
  claimsTopic,
  ConcurrencyLimit,
  type ConfigPart,
  FlowManager,
  type HedgeOptions,
  hedgeSettingsOf,
  RecentRequests,
  replyTimeouts,
  RequestClaims,
  ServiceCallSlots,
  ServiceHedging,
  type RequestGate,
  type ServiceTelemetry,
  ToolServiceClients,
} from './flow/index.js';
import type { Logger } from 'pino';
import { BrokerProbe, queueToTopic, splitPulsarTopic, type Transport } from './bus/index.js';
import { ConfigClient, ConfigWatcher, type FlowDefinition, type FlowProblem, parseFlows, type WorkspaceChange } from './config/index.js';
import { TOOL_CONFIG_TYPES, type ToolRegistry, WorkspaceRegistries } from './tools/index.js';
import { PATTERN_CONFIG_TYPES, PATTERN_IDS, WorkspacePatterns } from './agent/index.js';
import { discoveryArgumentSource, type McpDiscoveryLookup } from './mcp/index.js';
import type { Settings } from './settings.js';
import { errorMessage } from './errors/index.js';

export interface ServiceHooks {
  /** Metrics and the audit trail. */
  telemetry: ServiceTelemetry;
  /** A workspace's tool registry was (re)built and is now in use. */
  onRegistryBuilt?(registry: ToolRegistry): void;
  /** Extra config types to watch, and what to do when they change (e.g. the group policy). */
  extraConfigTypes?: readonly string[];
  onConfig?(change: WorkspaceChange): void;
  /**
   * MCP argument discovery's snapshot of a workspace, read at every registry rebuild (design decision 9 (docs/design.md)).
   * Undefined (or no hook): the registry is built without discovery. When it changes, call `rebuildRegistry`.
   */
  mcpLookup?(workspace: string): McpDiscoveryLookup | undefined;
  onWorkspaceDeleted?(workspace: string): void;
  gate?: RequestGate;
}

export interface ConfigFailure {
  readonly workspace: string;
  readonly part: ConfigPart;
  readonly version: number;
  readonly message: string;
}

export type ServiceSettings = Partial<
  Pick<Settings, 'brokerPingTimeoutSeconds' | 'slotsHeldSeconds' | 'maxQueued' | 'maxQueuedBytes' | 'requestConsumers' | 'nextOnBus' | 'undeclaredArguments' | 'aggregationTopic' | 'aggregationTimeoutSeconds'>
> &
  Pick<
  Settings,
  | 'id'
  | 'concurrency'
  | 'maxIterations'
  | 'strictTools'
  | 'requestTimeoutSeconds'
  | 'maxRequestBytes'
  | 'configRequestQueue'
  | 'configResponseQueue'
  | 'configPushQueue'
  | 'configTimeoutSeconds'
> &
  Partial<
    Pick<Settings, 'librarianTimeoutSeconds' | 'librarianMaxInFlight' | 'serviceMaxInFlight' | 'promptTimeoutSeconds' | 'streamGapTimeoutSeconds' | 'serviceTimeouts' | 'configType'>
  > &
  HedgeOptions & {
    /** How long a flow retries a publish while the broker is unreachable (not a flag). Default 60 s. */
    publishRetryMs?: number;
  };

export class AgentService {
  readonly registries: WorkspaceRegistries;
  /** Every workspace's `agent-pattern` / `agent-task-type` catalog. */
  readonly patterns: WorkspacePatterns;
  readonly limit: ConcurrencyLimit;
  /** The bound on requests in flight to each service request topic (`--service-max-in-flight`). */
  readonly callSlots: ServiceCallSlots;
  private readonly flows: FlowManager;
  /** Asks the other replicas whether one took a request the broker delivered again (request-claims.ts). */
  private readonly claims: RequestClaims;
  private readonly watcher: ConfigWatcher;
  private readonly toolServices: ToolServiceClients;
  private readonly flowProblems = new Map<string, FlowProblem[]>();
  /** Workspace → its `additional-context` value of config type `configType` (TrustGraph's `--config-type`). */
  private readonly additionalContexts = new Map<string, string>();
  private readonly probe: BrokerProbe | undefined;
  /** Workspace → part → its last failure; a part's entry goes when it next applies. */
  private readonly configFailures = new Map<string, Map<ConfigPart, ConfigFailure>>();
  private started = false;

  constructor(
    private readonly settings: ServiceSettings,
    private readonly transport: Transport,
    private readonly logger: Logger,
    private readonly hooks: ServiceHooks,
  ) {
    this.limit = new ConcurrencyLimit(settings.concurrency);
    this.probe = livenessProbe(settings, transport, logger);
    const telemetry = hooks.telemetry;
    const mcpLookup = hooks.mcpLookup?.bind(hooks);
    this.registries = new WorkspaceRegistries(
      logger,
      (registry, seconds) => {
        telemetry.registryRebuilt(registry, seconds);
        hooks.onRegistryBuilt?.(registry);
      },
      mcpLookup && ((workspace) => {
        const lookup = mcpLookup(workspace);
        return lookup === undefined ? undefined : discoveryArgumentSource(lookup);
      }),
    );
    this.patterns = new WorkspacePatterns(logger, PATTERN_IDS);
    const hedgeSettings = hedgeSettingsOf(settings);
    const hedging = hedgeSettings && new ServiceHedging(hedgeSettings, telemetry);
    this.callSlots = new ServiceCallSlots(settings.serviceMaxInFlight);
    this.toolServices = toolServiceClients(settings, transport, logger, hedging, this.callSlots);
    const recent = new RecentRequests();
    const topicspace = splitPulsarTopic(queueToTopic(settings.configPushQueue)).tenant;
    this.claims = new RequestClaims({ transport, recent, topic: claimsTopic(topicspace, settings.id), logger });
    this.flows = new FlowManager(
      {
        transport,
        processorId: settings.id,
        timeouts: settings,
        maxIterations: settings.maxIterations,
        strictTools: settings.strictTools,
        ...(settings.maxRequestBytes === undefined ? {} : { maxRequestBytes: settings.maxRequestBytes }),
        undeclaredArguments: settings.undeclaredArguments ?? 'drop',
        logger,
        registryFor: (workspace) => this.registries.get(workspace),
        patternsFor: (workspace) => this.patterns.get(workspace),
        additionalContextFor: (workspace) => this.additionalContexts.get(workspace),
        limit: this.limit,
        ...(settings.maxQueued !== undefined ? { maxQueued: settings.maxQueued } : {}),
        ...(settings.maxQueuedBytes !== undefined ? { maxQueuedBytes: settings.maxQueuedBytes } : {}),
        ...(settings.requestConsumers !== undefined ? { requestConsumers: settings.requestConsumers } : {}),
        ...(settings.nextOnBus ? { nextOnBus: true } : {}),
        toolServices: this.toolServices,
        ...(hedging ? { hedging } : {}),
        callSlots: this.callSlots,
        recent,
        claims: this.claims,
        telemetry,
        ...(hooks.gate ? { gate: hooks.gate } : {}),
        ...(settings.librarianTimeoutSeconds !== undefined ? { librarianTimeoutMs: settings.librarianTimeoutSeconds * 1000 } : {}),
        ...(settings.librarianMaxInFlight !== undefined ? { librarianMaxInFlight: settings.librarianMaxInFlight } : {}),
        aggregation: {
          ...(settings.aggregationTopic !== undefined ? { topicTemplate: settings.aggregationTopic } : {}),
          ...(settings.aggregationTimeoutSeconds !== undefined ? { timeoutMs: settings.aggregationTimeoutSeconds * 1000 } : {}),
        },
        ...(settings.publishRetryMs !== undefined ? { publishRetryMs: settings.publishRetryMs } : {}),
      },
      logger,
    );
    this.watcher = new ConfigWatcher({
      transport,
      client: new ConfigClient({
        transport,
        requestQueue: settings.configRequestQueue,
        responseQueue: settings.configResponseQueue,
        timeoutMs: settings.configTimeoutSeconds * 1000,
        logger,
      }),
      pushQueue: settings.configPushQueue,
      types: [...new Set([this.flowConfigType, ...TOOL_CONFIG_TYPES, ...PATTERN_CONFIG_TYPES, this.agentConfigType, ...(hooks.extraConfigTypes ?? [])])],
      onChange: (change) => this.applyConfigChange(change),
      onWorkspaceDeleted: (workspace) => this.applyWorkspaceDeleted(workspace),
      logger,
    });
  }

  /** The config type whose `additional-context` key is the model's context (TrustGraph's `--config-type`). */
  get agentConfigType(): string {
    return this.settings.configType ?? 'agent';
  }

  /** TrustGraph's flow service writes this agent's flows under `processor:<id>`. */
  get flowConfigType(): string {
    return `processor:${this.settings.id}`;
  }

  /** Subscribes, loads configuration (retrying until the config service answers) and starts the flows. */
  async start(): Promise<void> {
    this.probe?.start();
    await this.watcher.start();
    // After the configuration: the broker has answered by then. Without it a redelivered request just runs.
    await this.claims.start().catch((error: unknown) => {
      this.logger.warn({ err: error }, `Could not subscribe to the request claims topic (${errorMessage(error)}): a request the broker delivers again to this replica runs without asking the others whether one took it`);
    });
    this.started = true;
  }

  /**
   * Ready: configuration loaded and its latest change applied, every configured flow subscribed, the broker
   * connected and answering, and a concurrency slot free or taken recently.
   */
  readiness(): { ready: boolean; detail: string } {
    if (!this.started || !this.watcher.isLoaded) {
      const waiting = this.watcher.waitingFor;
      return { ready: false, detail: `configuration not loaded yet${waiting ? `: waiting for ${waiting}` : ''}` };
    }
    const pending = this.watcher.pendingWorkspaces;
    if (pending.length > 0) return { ready: false, detail: `configuration changes not fetched yet for: ${pending.join(', ')}` };
    const failure = this.watcher.applyFailure;
    if (failure !== undefined) return { ready: false, detail: `the latest configuration change could not be applied: ${failure}` };
    const [partFailure] = this.failuresOfConfig();
    if (partFailure) {
      return {
        ready: false,
        detail: `the ${partFailure.part} part of config version ${partFailure.version} for workspace ${partFailure.workspace} could not be applied: ${partFailure.message}`,
      };
    }
    if (this.flows.failedCount > 0) return { ready: false, detail: `${this.flows.failedCount} flow(s) failed to start` };
    const status = this.transport.status();
    // A producer down while every consumer is back holds back only the publishes that need it (transport.ts).
    if (!(status.receiving ?? status.connected)) return { ready: false, detail: `broker connection: ${status.detail ?? 'disconnected'}` };
    const probe = this.probe?.state();
    if (probe && !probe.responsive) return { ready: false, detail: `broker unresponsive: ${probe.detail ?? ''}` };
    const heldMs = this.limit.allHeldForMs();
    const slotsHeldSeconds = this.settings.slotsHeldSeconds;
    if (slotsHeldSeconds !== undefined && heldMs > slotsHeldSeconds * 1000) {
      return {
        ready: false,
        detail:
          `every concurrency slot (${this.limit.limit}) has been held for ${Math.round(heldMs / 1000)} s ` +
          `(limit ${slotsHeldSeconds} s); ${this.limit.queued} iteration(s) waiting for a slot`,
      };
    }
    const reconnecting = status.connected ? '' : `; broker connection: ${status.detail ?? 'a producer reconnecting'}`;
    return { ready: true, detail: `config version ${this.watcher.currentVersion}, ${this.flows.flows().length} flow(s)${reconnecting}` };
  }

  runningFlows(): FlowDefinition[] {
    return this.flows.flows();
  }

  problemsOfFlows(): FlowProblem[] {
    return [...this.flowProblems.values()].flat();
  }

  /** Parts of config changes that failed to apply and have not applied since. */
  failuresOfConfig(workspace?: string): ConfigFailure[] {
    const maps = workspace === undefined ? [...this.configFailures.values()] : [this.configFailures.get(workspace) ?? new Map()];
    return maps.flatMap((parts) => [...parts.values()]);
  }

  get configVersion(): number {
    return this.watcher.currentVersion;
  }

  /**
   * Rebuild one workspace's registry from the configuration already read (e.g. after MCP discovery's
   * snapshot changed). Keeps the config version of the newest build. Never rejects.
   */
  rebuildRegistry(workspace: string): Promise<ToolRegistry> {
    const version = this.registries.latestVersion(workspace) ?? this.watcher.currentVersion;
    return this.registries.rebuild(workspace, this.watcher.store.snapshot(workspace), version);
  }

  /** Stop taking requests, let in-flight iterations finish (bounded by `graceMs`), close everything. */
  async stop(graceMs = 30_000): Promise<void> {
    const stopped = this.flows.stopAll();
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), graceMs).unref());
    if ((await Promise.race([stopped.then(() => 'done' as const), timeout])) === 'timeout') {
      this.logger.warn({ graceMs }, 'In-flight iterations did not finish in time; closing anyway');
    }
    await this.watcher.stop().catch(() => {});
    await this.claims.stop();
    await this.probe?.stop();
    await this.toolServices.close();
  }

  /**
   * Everything a config change does, in the order it does it (the config watcher calls this with each change
   * it fetched; the reload benchmark drives it directly, so no piece of a reload escapes its timing).
   */
  async applyConfigChange(change: WorkspaceChange): Promise<void> {
    const { workspace, changedTypes, snapshot, version } = change;
    // The policy first: a tightened policy holds before anything else of the change is applied.
    await this.applyPart(change, 'hooks', () => this.hooks.onConfig?.(change));
    if (changedTypes.some((t) => (TOOL_CONFIG_TYPES as readonly string[]).includes(t))) {
      // In time slices: requests are served by the previous registry until the new one is complete.
      await this.applyPart(change, 'tools', () => this.registries.rebuild(workspace, snapshot, version));
    }
    if (changedTypes.includes(this.agentConfigType)) {
      // Stored as the raw config value, as TrustGraph reads it (not JSON-decoded).
      const context = snapshot[this.agentConfigType]?.['additional-context'];
      if (context) this.additionalContexts.set(workspace, context);
      else this.additionalContexts.delete(workspace);
    }
    if (WorkspacePatterns.affectedBy(changedTypes)) {
      await this.applyPart(change, 'patterns', () => this.patterns.rebuild(workspace, snapshot));
    }
    if (changedTypes.includes(this.flowConfigType)) {
      await this.applyPart(change, 'flows', async () => {
        const { flows, problems } = parseFlows(workspace, snapshot[this.flowConfigType] ?? {});
        this.flowProblems.set(workspace, problems);
        for (const problem of problems) {
          this.logger.error({ workspace, flow: problem.flow }, `Flow configuration problem: ${problem.message}`);
        }
        await this.flows.sync(workspace, flows);
      });
    }
    this.hooks.telemetry.configVersion(version);
  }

  /** Apply one part of a change; a failure is logged, reported and kept for the listing, never thrown. */
  private async applyPart(change: WorkspaceChange, part: ConfigPart, apply: () => unknown): Promise<void> {
    const { workspace, version } = change;
    let failures = this.configFailures.get(workspace);
    try {
      await apply();
      failures?.delete(part);
    } catch (error) {
      const message = errorMessage(error);
      this.logger.error(
        { err: error, workspace, part, version },
        `Could not apply the ${part} part of config version ${version}: ${message}; the other parts are applied, this one keeps its previous state`,
      );
      if (!failures) this.configFailures.set(workspace, (failures = new Map()));
      failures.set(part, { workspace, part, version, message });
      this.hooks.telemetry.configFailed(workspace, part, message);
    }
  }

  /** Everything a workspace's deletion does (the config watcher calls this). */
  async applyWorkspaceDeleted(workspace: string): Promise<void> {
    await this.flows.sync(workspace, []);
    this.registries.delete(workspace);
    this.patterns.delete(workspace);
    this.additionalContexts.delete(workspace);
    this.flowProblems.delete(workspace);
    this.configFailures.delete(workspace);
    this.hooks.telemetry.workspaceDeleted(workspace);
    this.hooks.onWorkspaceDeleted?.(workspace);
  }
}

/** The clients of the tool services every flow shares; a call is hedged only to one configured idempotent. */
function toolServiceClients(
  settings: ServiceSettings,
  transport: Transport,
  logger: Logger,
  hedging: ServiceHedging | undefined,
  callSlots: ServiceCallSlots,
): ToolServiceClients {
  const waits = replyTimeouts(settings, 'tool-service');
  return new ToolServiceClients({
    transport,
    processorId: settings.id,
    timeoutMs: waits.firstMs,
    gapTimeoutMs: waits.gapMs,
    logger,
    ...(hedging ? { hedging } : {}),
    callSlots,
  });
}

/** The broker liveness probe behind /readyz (`--broker-ping-timeout`), on a topic beside the config queue's. */
function livenessProbe(settings: ServiceSettings, transport: Transport, logger: Logger): BrokerProbe | undefined {
  if (settings.brokerPingTimeoutSeconds === undefined) return undefined;
  const { tenant, namespace } = splitPulsarTopic(queueToTopic(settings.configRequestQueue));
  return new BrokerProbe({
    transport,
    topic: `non-persistent://${tenant}/${namespace}/${settings.id}-liveness`,
    timeoutMs: settings.brokerPingTimeoutSeconds * 1000,
    logger,
  });
}
