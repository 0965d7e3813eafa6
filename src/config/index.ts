/** TrustGraph's config service: the client, the watcher (poke + fetch) with each workspace's last values, and the flows read from it. */
export { ConfigClient } from './config-client.js';
export { ConfigWatcher, type WorkspaceChange } from './config-watcher.js';
export { diffFlows, type FlowDefinition, flowKey, type FlowProblem, parseFlows } from './flows.js';
export type { TypeValues, WorkspaceSnapshot } from './workspace-config.js';
