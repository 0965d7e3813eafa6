/**
 * TrustGraph's config service: the client, the watcher (poke + fetch) with each workspace's last values, the flows
 * read from it, a `tg-show-config` dump read as the service's answers, and the limits of one config value.
 */
export { ConfigClient } from './config-client.js';
export { parseConfigDump } from './config-dump.js';
export { AuditLogError, ConfigDumpError } from './errors.js';
export { ConfigWatcher, type WorkspaceChange } from './config-watcher.js';
export { diffFlows, type FlowDefinition, flowKey, type FlowProblem, parseFlows } from './flows.js';
export type { TypeValues, WorkspaceSnapshot } from './workspace-config.js';
export { MAX_CONFIG_VALUE_CHARS, MAX_CONFIG_VALUE_DEPTH, MAX_CONFIG_VALUE_NODES } from './value-limits.js';
