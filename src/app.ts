/**
 * The whole agent, wired: service, metrics, audit trail, security gate and HTTP endpoints, from settings,
 * a transport and a logger. `main.ts` runs it as a process; tests run it in-process.
 */
import type { Logger } from 'pino';
import { flowSubscriptionName, type Producer, queueToTopic, type Transport, untilBrokerUp } from './bus/index.js';
import { MCP_CONFIG_TYPE, McpDiscovery } from './mcp/index.js';
import {
  AgentMetrics,
  AgentTelemetry,
  AnswerRecommendations,
  AuditTrail,
  BrokerDropStats,
  DownstreamLoad,
  HttpServer,
} from './observability/index.js';
import { groupsParam, toolListing } from './tool-listing.js';
import { IterationSigner, LISTENING_SKEW_MS, SecurityGate, SeenSignatureLedger } from './security/index.js';
import { DEFAULT_PUBLISH_RETRY_MS } from './flow/index.js';
import { AgentService, type ServiceSettings } from './service.js';
import { renderWorkflow, WorkflowChecks, type WorkflowFormat, workflowGraph } from './workflow/index.js';
import { backendNamed } from './backends.js';
import type { Settings } from './settings.js';
import { errorMessage } from './errors/index.js';
import { settingsSecrets } from './settings-secrets.js';

export interface AgentApp {
  readonly service: AgentService;
  readonly metrics: AgentMetrics;
  readonly gate: SecurityGate;
  readonly http: HttpServer;
  /** MCP argument discovery, when `mcpDiscovery` is on. */
  readonly mcpDiscovery: McpDiscovery | undefined;
  /** The workflow linter's latest findings per workspace. */
  readonly workflow: WorkflowChecks;
  /** Listen, then load config and start flows. Returns the HTTP port. */
  start(): Promise<number>;
  stop(): Promise<void>;
}

export async function createAgentApp(settings: Settings, transport: Transport, logger: Logger): Promise<AgentApp> {
  const metrics = new AgentMetrics(settings.id);
  const stopping = new AbortController();
  const auditProducer = auditProducerFor(settings, transport, logger, stopping.signal);
  const audit = new AuditTrail(logger.child({ component: 'audit' }), auditProducer);
  const load = new DownstreamLoad();
  // Only the task types a workspace configures are counted (the service, made below, keeps its pattern catalogs).
  const recommendations = new AnswerRecommendations({ taskTypes: (workspace) => service.patterns.get(workspace)?.taskTypes.keys() });
  const telemetry = new AgentTelemetry({ metrics, audit, logger, transport: transport.kind, mcpDiscovery: settings.mcpDiscovery, load, recommendations });
  const { gate, ledger } = securityGate(settings, telemetry, { load, recommendations }, transport, logger, stopping.signal);
  // MCP argument discovery runs in the background, never in a request's way; a changed snapshot rebuilds the registry.
  const discovery = settings.mcpDiscovery
    ? new McpDiscovery({
        ttlMs: settings.mcpDiscoveryTtlSeconds * 1000,
        timeoutMs: settings.mcpDiscoveryTimeoutSeconds * 1000,
        logger: logger.child({ component: 'mcp-discovery' }),
        onChange: (workspace) => void service.rebuildRegistry(workspace),
        telemetry,
      })
    : undefined;
  const workflow = new WorkflowChecks({
    logger: logger.child({ component: 'workflow-lint' }),
    policyOf: (workspace) => gate.policyOf(workspace),
    onCounts: (workspace, counts) => metrics.workflowChecked(workspace, counts),
  });
  const service: AgentService = new AgentService(settings, transport, logger, {
    telemetry,
    // In time slices, after the registry is in place: requests never wait for the checks.
    onRegistryBuilt: (registry) => void workflow.check(registry),
    extraConfigTypes: [...new Set([settings.policyConfigType, ...(discovery ? [MCP_CONFIG_TYPE] : [])])],
    onConfig: (change) => {
      gate.onConfig(change);
      discovery?.onConfig(change);
      // A policy change alone rebuilds no registry: check the one in use against the new policy.
      const registry = change.changedTypes.includes(settings.policyConfigType) ? service.registries.all().find((r) => r.workspace === change.workspace) : undefined;
      if (registry) void workflow.check(registry);
    },
    ...(discovery ? { mcpLookup: (workspace: string) => discovery.lookup(workspace) } : {}),
    onWorkspaceDeleted: (workspace) => {
      workflow.forget(workspace);
      gate.onWorkspaceDeleted(workspace);
      discovery?.onWorkspaceDeleted(workspace);
    },
    gate,
  });
  metrics.scraped.watchReadiness(() => service.readiness().ready);
  metrics.scraped.watchSlots(() => service.limit);
  metrics.scraped.watchCallsWaiting(() => service.callSlots.waiting());
  metrics.scraped.watchReplayMemory(() => gate.rememberedSignatures);
  const dropStats = brokerDropStats(settings, service, telemetry, logger);
  const http = httpServer({ settings, transport, logger, service, metrics, gate, discovery, workflow, recommendations });
  return {
    service,
    metrics,
    gate,
    http,
    mcpDiscovery: discovery,
    workflow,
    async start() {
      // Health and readiness are always served (probes need them); --no-metrics only drops /metrics.
      const port = await http.listen(settings.metricsPort, settings.httpHost);
      discovery?.start();
      dropStats?.start();
      // Before the request topics: a signature accepted by another replica from now on is known here.
      await ledger?.start();
      await service.start();
      return port;
    },
    async stop() {
      await discovery?.stop();
      dropStats?.stop();
      await service.stop(settings.shutdownGraceSeconds * 1000);
      await ledger?.stop();
      stopping.abort();
      await auditProducer?.then((producer) => producer.close()).catch(() => {});
      await http.close();
    },
  };
}

/** The producer of `--audit-topic`, once the broker takes it (undefined without the option); a refusal is logged. */
function auditProducerFor(settings: Settings, transport: Transport, logger: Logger, stopping: AbortSignal): Promise<Producer> | undefined {
  const auditTopic = settings.auditTopic ? queueToTopic(settings.auditTopic) : undefined;
  const producer = auditTopic ? untilBrokerUp(() => transport.createProducer(auditTopic), { signal: stopping }) : undefined;
  producer?.catch((error: unknown) => {
    if (!stopping.aborted) logger.error({ err: errorMessage(error), topic: auditTopic }, 'Audit records will not be published: the audit topic refused a producer');
  });
  return producer;
}

/** The request gate; with signing, also the ledger through which the replicas share what they accepted. */
function securityGate(
  settings: Settings,
  telemetry: AgentTelemetry,
  readers: { load: DownstreamLoad; recommendations: AnswerRecommendations },
  transport: Transport,
  logger: Logger,
  stopping: AbortSignal,
): { gate: SecurityGate; ledger: SeenSignatureLedger | undefined } {
  const signer = settings.signingKey
    ? new IterationSigner(settings.signingKey, {
        ...(settings.signingKeyPrevious ? { previousKey: settings.signingKeyPrevious } : {}),
        maxAgeMs: settings.signingMaxAgeSeconds * 1000,
        replayMemory: settings.replayMemory,
        // A `next` whose publish was retried through a broker outage is still genuine when it arrives.
        listeningMarginMs: (publishRetryMsOf(settings) ?? DEFAULT_PUBLISH_RETRY_MS) + LISTENING_SKEW_MS,
      })
    : undefined;
  const gate = new SecurityGate({ policyConfigType: settings.policyConfigType, strictStates: settings.strictStates, telemetry, ...readers, ...(signer ? { signer } : {}) });
  const ledger = signer
    ? new SeenSignatureLedger({ transport, signer, processorId: settings.id, logger: logger.child({ component: 'seen-signatures' }), telemetry, signal: stopping })
    : undefined;
  return { gate, ledger };
}

/** The service's publish retry window, where the settings set one (tests do; the command line does not). */
function publishRetryMsOf(settings: ServiceSettings): number | undefined {
  return settings.publishRetryMs;
}

/** The broker's drop counters of the agent's request subscriptions, where the broker's admin API is known. */
function brokerDropStats(settings: Settings, service: AgentService, telemetry: AgentTelemetry, logger: Logger): BrokerDropStats | undefined {
  const admin = backendNamed(settings.pubsubBackend).adminApi?.(settings);
  if (!admin) return undefined;
  return new BrokerDropStats({
    adminUrl: admin.url,
    ...(admin.token ? { token: admin.token } : {}),
    intervalMs: 30_000,
    subscriptions: () =>
      service.runningFlows().flatMap((flow) => {
        const queue = flow.topics.request;
        return queue ? [{ topic: queueToTopic(queue), subscription: flowSubscriptionName(settings.id, flow.workspace, flow.flow, 'request') }] : [];
      }),
    onRate: (watched, rate) => telemetry.brokerDropRate(watched, rate),
    logger: logger.child({ component: 'broker-drop-stats' }),
  });
}

interface HttpParts {
  readonly settings: Settings;
  readonly transport: Transport;
  readonly logger: Logger;
  readonly service: AgentService;
  readonly metrics: AgentMetrics;
  readonly gate: SecurityGate;
  readonly discovery: McpDiscovery | undefined;
  readonly workflow: WorkflowChecks;
  readonly recommendations: AnswerRecommendations;
}

/** The endpoints: readiness, metrics, the tool listing and the workflow view. */
function httpServer({ settings, transport, logger, service, metrics, gate, discovery, workflow, recommendations }: HttpParts): HttpServer {
  return new HttpServer(
    {
      readiness: () => {
        const { ready, detail } = service.readiness();
        return { ready, detail: `${detail}; transport ${transport.kind}` };
      },
      ...(settings.metrics ? { metrics: () => metrics.scrape() } : {}),
      tools: (workspace, query) => toolListing(service, gate, workspace, query, { mcpDiscovery: discovery, workflow, recommendations }),
      workflow: async (workspace, format, query) => {
        const registry = service.registries.all().find((r) => r.workspace === workspace);
        if (!registry) return undefined;
        const request = query.has('groups') || query.has('state') ? { groups: groupsParam(query), state: query.get('state') || null } : undefined;
        return renderWorkflow(workflowGraph(registry, gate.policyOf(workspace), request), format as WorkflowFormat, query);
      },
    },
    logger,
    { ...(settings.httpToken ? { listingToken: settings.httpToken } : {}), secrets: settingsSecrets(settings) },
  );
}
