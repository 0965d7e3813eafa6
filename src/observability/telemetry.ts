/**
 * The agent's telemetry, implemented once: every event the flows, the service, the request gate, MCP
 * discovery and the broker's drop statistics report becomes Prometheus metrics (label values clamped by
 * AgentMetrics, the `processor` label added by its registry), log lines and, per request, one audit record
 * (IterationRecorder). Each emitter declares the part of the vocabulary it speaks (`FlowTelemetry`,
 * `RequestTelemetry` and `ServiceTelemetry` in flow/ports.ts, `GateTelemetry`, `DiscoveryTelemetry`), every
 * method required; the app hands this one object to all of them, tests hand them `noTelemetry`.
 */
import type { Logger } from 'pino';
import type { FlowDefinition } from '../config/flows.js';
import type { DocumentSaveOutcome } from '../flow/document-saver.js';
import type { AggregationOutcome, ConfigPart, DownstreamOutcome, NextEvent, RequestTelemetry, ServiceTelemetry } from '../flow/ports.js';
import type { DiscoveryFailureReason } from '../mcp/errors.js';
import type { DiscoveryTelemetry } from '../mcp/discovery.js';
import type { GateTelemetry } from '../security/request-gate.js';
import type { RecordRefusal } from '../security/iteration-signature.js';
import type { LedgerTelemetry } from '../security/seen-signature-ledger.js';
import type { ToolRegistry } from '../tools/registry/registry.js';
import type { AgentAsk } from '../tools/registry/selection.js';
import type { AuditTrail } from './audit.js';
import type { WatchedSubscription } from './broker-drop-stats.js';
import { IterationRecorder } from './iteration-recorder.js';
import type { AgentMetrics } from './metrics.js';
import { serviceOfTarget, type DownstreamLoad } from './downstream-load.js';
import type { AnswerRecommendations } from './recommendations.js';

/** The whole vocabulary: what any part of the agent reports. */
export type Telemetry = Required<ServiceTelemetry> &
  Required<GateTelemetry> &
  Required<LedgerTelemetry> &
  Required<DiscoveryTelemetry> & {
    brokerDropRate(watched: WatchedSubscription, ratePerSecond: number): void;
  };

export interface AgentTelemetryOptions {
  metrics: AgentMetrics;
  /** Absent: requests are counted but not audited. */
  audit?: AuditTrail;
  logger: Logger;
  /** The transport in use (`tg_agent_transport_info`). */
  transport: string;
  /** MCP argument discovery is on: its series are exported. */
  mcpDiscovery: boolean;
  /** Also told of every downstream call (the group policy's load rules read it). */
  load?: DownstreamLoad;
  /** Told of every conversation that ends with an answer (the listing's recommendations). */
  recommendations?: AnswerRecommendations;
}

export class AgentTelemetry implements Telemetry {
  private readonly metrics: AgentMetrics;

  constructor(private readonly options: AgentTelemetryOptions) {
    this.metrics = options.metrics;
    this.metrics.transportInfo.set({ transport: options.transport }, 1);
    if (options.mcpDiscovery) this.metrics.mcpDiscoveryEnabled();
  }

  request(flow: FlowDefinition, ask: AgentAsk | undefined, id: string): RequestTelemetry {
    return new IterationRecorder(this.metrics, this.options.audit, flow, ask, id, this.options.recommendations);
  }

  next(event: NextEvent): void {
    this.metrics.nextMessages.inc({ event });
  }

  overloaded(): void {
    this.metrics.overloadRefusals.inc();
  }

  consumed(consumer: string, seconds: number, ok: boolean): void {
    this.metrics.consumerDuration.observe({ consumer }, seconds);
    this.metrics.consumerProcessing.inc({ consumer, status: ok ? 'ok' : 'error' });
  }

  /** Both statuses from 0, so the first lost request shows as an increase (the TgAgentLostConversations alert). */
  subscribing(consumer: string): void {
    for (const status of ['ok', 'error']) this.metrics.consumerProcessing.inc({ consumer, status }, 0);
  }

  produced(producer: string): void {
    this.metrics.producerMessages.inc({ producer });
  }

  downstream(targetService: string, { seconds, status, errorType }: DownstreamOutcome): void {
    const labels = { target_service: targetService };
    this.metrics.downstreamDuration.observe(labels, seconds);
    if (status === 'timeout') this.metrics.downstreamTimeouts.inc(labels);
    if (status === 'error') this.metrics.downstreamErrors.inc({ ...labels, error_type: errorType ?? 'unknown' });
    this.options.load?.record(serviceOfTarget(targetService), seconds, status !== 'ok');
  }

  documentSaved(outcome: DocumentSaveOutcome): void {
    this.metrics.librarianDocuments.inc({ outcome });
  }

  aggregationEnded(outcome: AggregationOutcome): void {
    this.metrics.aggregations.inc({ outcome });
  }

  aggregationRefused(reason: string): void {
    this.metrics.escalationAttempts.inc({ reason });
  }

  registryRebuilt(registry: ToolRegistry, seconds: number): void {
    this.metrics.registryRebuilt(registry, seconds);
    if (this.options.mcpDiscovery) this.metrics.mcpRegistryRebuilt(registry);
  }

  configVersion(version: number): void {
    this.metrics.configVersion.set(version);
  }

  configFailed(_workspace: string, part: ConfigPart): void {
    this.metrics.configFailures.inc({ part });
  }

  workspaceDeleted(workspace: string): void {
    this.metrics.workspaceDeleted(workspace);
    this.options.recommendations?.forget(workspace);
    this.metrics.policyProblems.remove({ workspace });
  }

  policyRead(workspace: string, problems: readonly string[]): void {
    for (const problem of problems) this.options.logger.error({ workspace }, `Group policy problem: ${problem}`);
    this.metrics.policyProblems.set({ workspace }, problems.length);
  }

  discoveryFailed(_workspace: string, _mcpKey: string, reason: DiscoveryFailureReason): void {
    this.metrics.mcpDiscoveryFailed(reason);
  }

  discoveryStatus(workspace: string, failing: number): void {
    this.metrics.mcpDiscoveryStatus(workspace, failing);
  }

  ledgerRecordRefused(reason: RecordRefusal): void {
    this.metrics.ledgerRefusals.inc({ reason });
  }

  brokerDropRate({ topic, subscription }: WatchedSubscription, ratePerSecond: number): void {
    this.metrics.brokerDropRate.set({ topic, subscription }, ratePerSecond);
  }
}
