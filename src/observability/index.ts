/** Metrics, the audit trail, the HTTP endpoints, the logger, and what the group policy's load and fallback rules read. */
export { AuditTrail } from './audit.js';
export { BrokerDropStats } from './broker-drop-stats.js';
export { DownstreamLoad } from './downstream-load.js';
export { HttpServer } from './http-server.js';
export { AgentMetrics } from './metrics.js';
export { AnswerRecommendations } from './recommendations.js';
export { createServiceLogger } from './service-logger.js';
export { AgentTelemetry } from './telemetry.js';
