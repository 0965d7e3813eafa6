/**
 * The whole agent, wired: service, metrics, audit trail, security gate and HTTP endpoints, from settings,
 * a transport and a logger. `main.ts` runs it as a process; tests run it in-process.
 */
import type { Logger } from 'pino';
import type { Transport } from './bus/transport.js';
import { flowSubscriptionName, queueToTopic } from './bus/topics.js';
import { McpDiscovery } from './mcp/discovery.js';
import { MCP_CONFIG_TYPE } from './mcp/mcp-config.js';
import { AuditTrail } from './observability/audit.js';
import { BrokerDropStats } from './observability/broker-drop-stats.js';
import { HttpServer } from './observability/http-server.js';
import { IterationRecorder } from './observability/iteration-recorder.js';
import { AgentMetrics } from './observability/metrics.js';
import { toolListing } from './tool-listing.js';
import { IterationSigner } from './security/iteration-signature.js';
import { SecurityGate } from './security/request-gate.js';
import { AgentService } from './service.js';
import { brokerAdminUrlFor, type Settings } from './settings.js';

export interface AgentApp {
  readonly service: AgentService;
  readonly metrics: AgentMetrics;
  readonly gate: SecurityGate;
  readonly http: HttpServer;
  /** MCP argument discovery, when `mcpDiscovery` is on. */
  readonly mcpDiscovery: McpDiscovery | undefined;
  /** Listen, then load config and start flows. Returns the HTTP port. */
  start(): Promise<number>;
  stop(): Promise<void>;
}

export async function createAgentApp(settings: Settings, transport: Transport, logger: Logger): Promise<AgentApp> {
  const metrics = new AgentMetrics(settings.id);
  metrics.transportInfo.set({ processor: settings.id, transport: transport.kind }, 1);
  const auditProducer = settings.auditTopic ? await transport.createProducer(queueToTopic(settings.auditTopic)) : undefined;
  const audit = new AuditTrail(logger.child({ component: 'audit' }), auditProducer);
  const gate = new SecurityGate({
    policyConfigType: settings.policyConfigType,
    strictStates: settings.strictStates,
    metrics,
    ...(settings.signingKey
      ? {
          signer: new IterationSigner(settings.signingKey, {
            ...(settings.signingKeyPrevious ? { previousKey: settings.signingKeyPrevious } : {}),
            maxAgeMs: settings.signingMaxAgeSeconds * 1000,
          }),
        }
      : {}),
    onProblems: (workspace, problems) => {
      for (const problem of problems) logger.error({ workspace }, `Group policy problem: ${problem}`);
      metrics.policyProblems.set({ processor: settings.id, workspace }, problems.length);
    },
  });
  // design decision 9 (docs/design.md): in the background, never in a request's way; a changed snapshot rebuilds the registry.
  const discovery = settings.mcpDiscovery
    ? new McpDiscovery({
        ttlMs: settings.mcpDiscoveryTtlSeconds * 1000,
        timeoutMs: settings.mcpDiscoveryTimeoutSeconds * 1000,
        logger: logger.child({ component: 'mcp-discovery' }),
        onChange: (workspace) => service.rebuildRegistry(workspace),
        onFailure: (_workspace, _mcpKey, reason) => metrics.mcpDiscoveryFailed(reason),
        onStatus: (workspace, failing) => metrics.mcpDiscoveryStatus(workspace, failing),
      })
    : undefined;
  if (discovery) metrics.mcpDiscoveryEnabled();
  const service: AgentService = new AgentService(settings, transport, logger, {
    extraConfigTypes: [...new Set([settings.policyConfigType, ...(discovery ? [MCP_CONFIG_TYPE] : [])])],
    eventsFor: (flow, request, id) => new IterationRecorder(metrics, audit, flow, request, id),
    onConfig: (change) => {
      gate.onConfig(change);
      discovery?.onConfig(change);
    },
    onRegistry: (registry, seconds) => {
      metrics.registryRebuilt(registry, seconds);
      if (discovery) metrics.mcpRegistryRebuilt(registry);
    },
    ...(discovery ? { mcpLookup: (workspace: string) => discovery.lookup(workspace) } : {}),
    onConfigVersion: (version) => metrics.configVersion.set({ processor: settings.id }, version),
    onConfigFailure: (_workspace, part) => metrics.configFailures.inc({ processor: settings.id, part }),
    onWorkspaceDeleted: (workspace) => {
      metrics.workspaceDeleted(workspace);
      gate.onWorkspaceDeleted(workspace);
      metrics.policyProblems.remove({ processor: settings.id, workspace });
      discovery?.onWorkspaceDeleted(workspace);
    },
    gate,
    instrument: {
      next: (event) => metrics.nextMessages.inc({ processor: settings.id, event }),
      overloaded: () => metrics.overloadRefusals.inc({ processor: settings.id }),
      consumed: (consumer, seconds, ok) => {
        metrics.consumerDuration.observe({ processor: settings.id, consumer }, seconds);
        metrics.consumerProcessing.inc({ processor: settings.id, consumer, status: ok ? 'ok' : 'error' });
      },
      // Both statuses from 0, so the first lost request shows as an increase (the TgAgentLostConversations alert).
      subscribing: (consumer) => {
        for (const status of ['ok', 'error']) metrics.consumerProcessing.inc({ processor: settings.id, consumer, status }, 0);
      },
      produced: (producer) => metrics.producerMessages.inc({ processor: settings.id, producer }),
      downstream: (target_service, { seconds, status, errorType }) => {
        const labels = { processor: settings.id, target_service };
        metrics.downstreamDuration.observe(labels, seconds);
        if (status === 'timeout') metrics.downstreamTimeouts.inc(labels);
        if (status === 'error') metrics.downstreamErrors.inc({ ...labels, error_type: errorType ?? 'unknown' });
      },
      documentSaved: (outcome) => metrics.librarianDocuments.inc({ processor: settings.id, outcome }),
    },
  });
  metrics.watchReadiness(() => service.readiness().ready);
  const adminUrl = brokerAdminUrlFor(settings);
  const dropStats = adminUrl
    ? new BrokerDropStats({
        adminUrl,
        ...(settings.pulsarApiKey ? { token: settings.pulsarApiKey } : {}),
        intervalMs: 30_000,
        subscriptions: () =>
          service.runningFlows().flatMap((flow) => {
            const queue = flow.topics.request;
            return queue ? [{ topic: queueToTopic(queue), subscription: flowSubscriptionName(settings.id, flow.workspace, flow.flow, 'request') }] : [];
          }),
        onRate: ({ topic, subscription }, rate) => metrics.brokerDropRate.set({ processor: settings.id, topic, subscription }, rate),
        logger: logger.child({ component: 'broker-drop-stats' }),
      })
    : undefined;
  const http = new HttpServer(
    {
      readiness: () => {
        const { ready, detail } = service.readiness();
        return { ready, detail: `${detail}; transport ${transport.kind}` };
      },
      ...(settings.metrics ? { metrics: () => metrics.scrape() } : {}),
      tools: (workspace, query) => toolListing(service, gate, workspace, query, discovery),
    },
    logger,
    settings.httpToken ? { listingToken: settings.httpToken } : {},
  );
  return {
    service,
    metrics,
    gate,
    http,
    mcpDiscovery: discovery,
    async start() {
      // Health and readiness are always served (probes need them); --no-metrics only drops /metrics.
      const port = await http.listen(settings.metricsPort, settings.httpHost);
      discovery?.start();
      dropStats?.start();
      await service.start();
      return port;
    },
    async stop() {
      await discovery?.stop();
      dropStats?.stop();
      await service.stop(settings.shutdownGraceSeconds * 1000);
      await auditProducer?.close().catch(() => {});
      await http.close();
    },
  };
}
