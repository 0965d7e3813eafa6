/** MCP argument discovery (design decision 9 (docs/design.md)): `tools/list` of each `mcp` server, cached, as the registry's argument source. */
export type { McpDiscoveryLookup } from './discovery-result.js';
export { type DiscoveryTelemetry, McpDiscovery } from './discovery.js';
export { DISCOVERY_FAILURE_REASONS, type DiscoveryFailureReason } from './errors.js';
export { MCP_CONFIG_TYPE } from './mcp-config.js';
export { discoveryArgumentSource } from './mcp-tool-arguments.js';
