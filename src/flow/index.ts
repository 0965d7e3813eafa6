/** Running flows: their consumers, producers, clients and concurrency, and the ports the gate and telemetry implement. */
export { ConcurrencyLimit } from './concurrency-limit.js';
export type { DocumentSaveOutcome } from './document-saver.js';
export { FlowManager } from './flow-manager.js';
export type {
  AggregationCheck,
  AggregationOutcome,
  ConfigPart,
  DownstreamOutcome,
  GateVerdict,
  NextEvent,
  Refusal,
  RequestGate,
  RequestTelemetry,
  ServiceTelemetry,
  UnknownGroups,
} from './ports.js';
export { DEFAULT_PUBLISH_RETRY_MS } from './publish-policy.js';
export { RecentRequests } from './recent-requests.js';
export { claimsTopic, RequestClaims } from './request-claims.js';
export { DEFAULT_STREAM_GAP_SECONDS, parseServiceTimeouts, replyTimeouts } from './service-timeouts.js';
export { DEFAULT_SERVICE_MAX_IN_FLIGHT, ServiceCallSlots, type ServiceCallsWaiting } from './service-call-slots.js';
export { hedgeSettingsOf, ServiceHedging, type HedgeOptions } from './service-hedging.js';
export { ToolServiceClients } from './tool-service-clients.js';
