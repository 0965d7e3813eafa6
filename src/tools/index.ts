/**
 * Tools: their config (schemas, problems), arguments and validators, loading an entry into a `Tool`, a
 * workspace's registry with its indexes and tool sets, and running a tool through its TrustGraph service.
 */
export { argsObject, isPlainObject, parseJsonText } from './arguments/args-object.js';
export type {
  ArgumentOrigin,
  ArgumentSource,
  ArgumentSourceStatus,
  ArgumentsReport,
} from './arguments/argument-source.js';
export {
  type ArgumentIssue,
  type ArgumentValidation,
  type ArgumentValidator,
  compileArguments,
  notAnObject,
  type ToolArgument,
} from './arguments/arguments.js';
export { decodeEntry } from './config/config-entry.js';
export type { ProblemDetail } from './config/problems.js';
export { checkAgainst } from './config/schema-issues.js';
export {
  ARGUMENT_CONFIG_KEYS,
  type ArgumentType,
  STATES_ALIAS_KEY,
  STATES_KEY,
  stringList,
  TOOL_CONFIG_KEYS,
} from './config/tool-config-schema.js';
export { deepFreeze, frozenSet } from './freeze.js';
export { buildRegistry, type ToolRegistry } from './registry/registry.js';
export type { ToolSet } from './registry/tool-set.js';
export { LISTED_LEFT_OUT } from './registry/tool-set.js';
export { withoutTools } from './registry/without-tools.js';
export { TOOL_CONFIG_TYPES, WorkspaceRegistries } from './registry/workspace-registries.js';
export { runTool } from './run/run-tool.js';
export type { SubTrace } from './run/sub-trace.js';
export type { ToolClients } from './run/tool-clients.js';
export type { Tool, ToolServiceDescriptor } from './tool.js';
