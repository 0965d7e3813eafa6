/**
 * One `tool` config entry → a normalized, frozen `Tool`, or the problems that keep it out of the
 * registry. Each entry is judged on its own (design decision 5 (docs/design.md)); this never throws.
 */
import { inheritedGroups } from '../../groups/index.js';
import {
  argumentsFromConfig,
  compileArguments,
  toPromptArgument,
  type ArgumentValidator,
  type ToolArgument,
} from '../arguments/arguments.js';
import type { ArgumentSource, ArgumentsReport } from '../arguments/argument-source.js';
import { builtinValidator, BUILTIN_ARGUMENTS } from '../arguments/builtin-arguments.js';
import { decodeEntry, entryName } from '../config/config-entry.js';
import { quote } from '../../errors/index.js';
import { deepFreeze, frozenSet } from '../freeze.js';
import { makeProblem, type Problem, type ProblemDetail } from '../config/problems.js';
import { checkAgainst } from '../config/schema-issues.js';
import type {
  KnowledgeQueryTool,
  McpTool,
  PromptTool,
  RowEmbeddingsQueryTool,
  StructuredQueryTool,
  TextCompletionTool,
  Tool,
  ToolPromptForm,
  ToolServiceDescriptor,
  ToolServiceTool,
  ToolStates,
} from '../tool.js';
import { STATES_ALIAS_KEY, STATES_KEY, ToolConfigSchema, type ToolConfig } from '../config/tool-config-schema.js';

/** The tool-service descriptors of the workspace, for resolving `service` references. */
export interface ToolServiceLookup {
  readonly services: ReadonlyMap<string, ToolServiceDescriptor>;
  /** Keys of descriptors that exist but were invalid (reported on their own). */
  readonly invalid: ReadonlySet<string>;
  /** `mcp` entry key → its `group`, for the entries that have one (inherited by their `mcp-tool` tools). */
  readonly mcpGroups?: ReadonlyMap<string, readonly string[]>;
}

export interface ToolLoad {
  readonly tool?: Tool;
  /** Errors (when `tool` is absent) and warnings. */
  readonly problems: readonly Problem[];
  /** For an `mcp-tool` when MCP discovery is on: where its arguments came from, discovery status, drift. */
  readonly mcp?: ArgumentsReport;
}

const DEFAULT_GROUPS: readonly string[] = Object.freeze(['default']);
const DEFAULT_COLLECTION = 'default';
const DEFAULT_LIMIT = 10;

function normalizeStates(config: ToolConfig): ToolStates {
  const listed = config[STATES_KEY] ?? config[STATES_ALIAS_KEY];
  if (listed === null || listed === undefined || listed.includes('*')) return 'all';
  return frozenSet(listed);
}

const collectionOf = (value: string | null | undefined): string => (value ? value : DEFAULT_COLLECTION);

function serviceProblems(
  config: Extract<ToolConfig, { type: 'tool-service' }>,
  lookup: ToolServiceLookup,
): { descriptor?: ToolServiceDescriptor; problems: ProblemDetail[] } {
  const descriptor = lookup.services.get(config.service);
  if (descriptor === undefined) {
    if (lookup.invalid.has(config.service)) {
      return {
        problems: [{ field: 'service', message: `tool-service ${quote(config.service)} is invalid (see its own problem)` }],
      };
    }
    const known = [...lookup.services.keys()].sort();
    const listing = known.length === 0 ? 'none configured' : `known: ${known.slice(0, 10).join(', ')}${known.length > 10 ? ', …' : ''}`;
    return { problems: [{ field: 'service', message: `unknown tool-service ${quote(config.service)} (${listing})` }] };
  }
  const problems: ProblemDetail[] = descriptor.configParams
    .filter((param) => param.required && !Object.hasOwn(config, param.name))
    .map((param) => ({
      field: param.name,
      message: `required: config param of tool-service ${quote(descriptor.key)}`,
    }));
  return { descriptor, problems };
}

/** The fields every tool type has, apart from `type`. */
type CommonFields = Omit<TextCompletionTool, 'type'>;

/**
 * One tool object: the common fields written out in a literal, then the type's own fields. (Object
 * spread is avoided on purpose: V8 gives spread-built objects one hidden class each once the code is
 * optimized, which makes every later property read on thousands of tools megamorphic.)
 */
function toolOf<T extends Tool>(common: CommonFields, type: T['type'], own: Omit<T, keyof CommonFields | 'type'>): T {
  const tool = {
    key: common.key,
    type,
    name: common.name,
    description: common.description,
    groups: common.groups,
    states: common.states,
    nextState: common.nextState,
    arguments: common.arguments,
    validator: common.validator,
    prompt: common.prompt,
    config: common.config,
  };
  return Object.assign(tool, own) as unknown as T;
}

/**
 * Validate and normalize one `tool` entry.
 * @param raw the config value: a JSON string (or an already-decoded object)
 * @param mcp where `mcp-tool` arguments come from besides the config (MCP discovery's snapshot); absent when discovery is off
 */
export function loadTool(
  workspace: string,
  key: string,
  raw: unknown,
  lookup: ToolServiceLookup,
  mcp?: ArgumentSource,
): ToolLoad {
  const where = (name: string | undefined) => ({ workspace, kind: 'tool', key, name }) as const;
  const decoded = decodeEntry(raw);
  if (!decoded.ok) return { problems: [makeProblem(where(undefined), decoded.detail)] };
  const location = where(entryName(decoded.value));
  const checked = checkAgainst(ToolConfigSchema, decoded.value);
  if (!checked.ok) return { problems: checked.details.map((detail) => makeProblem(location, detail)) };
  const config = checked.data;

  const args = argumentsOf(config, decoded.value, mcp);
  if ('problems' in args) return { problems: args.problems.map((detail) => makeProblem(location, detail)) };
  const { declared, validator, mcpReport, warnings } = args;

  const prompt: ToolPromptForm = Object.freeze({
    name: config.name,
    description: config.description ?? null,
    arguments: Object.freeze(declared.map(toPromptArgument)),
  });
  const common: CommonFields = {
    key,
    name: config.name,
    description: config.description ?? null,
    groups: config.group ? Object.freeze([...new Set(config.group)]) : (inheritedGroups(config, lookup) ?? DEFAULT_GROUPS),
    states: normalizeStates(config),
    nextState: config.state ? config.state : undefined,
    arguments: declared,
    validator,
    prompt,
    config: deepFreeze(decoded.value),
  };

  const tool = typedTool(config, common, decoded.value, lookup);
  if ('problems' in tool) return { problems: tool.problems.map((detail) => makeProblem(location, detail)) };
  const problems = warnings.map((detail) => makeProblem(location, detail));
  return mcpReport === undefined ? { tool: Object.freeze(tool), problems } : { tool: Object.freeze(tool), problems, mcp: mcpReport };
}

/** The tool of its type over the fields every tool has; a tool service that cannot be resolved is problems. */
function typedTool(config: ToolConfig, common: CommonFields, entry: Record<string, unknown>, lookup: ToolServiceLookup): Tool | { problems: ProblemDetail[] } {
  switch (config.type) {
    case 'knowledge-query':
      return toolOf<KnowledgeQueryTool>(common, config.type, { collection: collectionOf(config.collection) });
    case 'text-completion':
      return toolOf<TextCompletionTool>(common, config.type, {});
    case 'mcp-tool':
      return toolOf<McpTool>(common, config.type, { mcpTool: config['mcp-tool'] });
    case 'prompt':
      return toolOf<PromptTool>(common, config.type, { template: config.template });
    case 'structured-query':
      return toolOf<StructuredQueryTool>(common, config.type, { collection: collectionOf(config.collection) });
    case 'row-embeddings-query':
      return toolOf<RowEmbeddingsQueryTool>(common, config.type, {
        schemaName: config['schema-name'],
        collection: collectionOf(config.collection),
        indexName: config['index-name'] ? config['index-name'] : undefined,
        limit: config.limit === null || config.limit === undefined ? DEFAULT_LIMIT : Number(config.limit),
      });
    case 'tool-service': {
      const resolved = serviceProblems(config, lookup);
      if (resolved.descriptor === undefined || resolved.problems.length > 0) return { problems: resolved.problems };
      const serviceConfig = Object.fromEntries(
        resolved.descriptor.configParams
          .filter((param) => Object.hasOwn(entry, param.name))
          .map((param) => [param.name, entry[param.name]] as const),
      );
      return toolOf<ToolServiceTool>(common, config.type, {
        service: resolved.descriptor,
        serviceConfig: Object.freeze(serviceConfig),
      });
    }
  }
}

/**
 * The arguments a tool declares and their validator: from its config (mcp-tool, prompt, tool-service; for an
 * mcp-tool, MCP discovery's where it is on), or the fixed ones of its type (a configured list is a warning).
 */
function argumentsOf(
  config: ToolConfig,
  entry: Record<string, unknown>,
  mcp: ArgumentSource | undefined,
): { declared: readonly ToolArgument[]; validator: ArgumentValidator; mcpReport: ArgumentsReport | undefined; warnings: ProblemDetail[] } | { problems: ProblemDetail[] } {
  const warnings: ProblemDetail[] = [];
  if (config.type === 'mcp-tool' || config.type === 'prompt' || config.type === 'tool-service') {
    const configured = argumentsFromConfig(config.arguments);
    if (configured.problems.length > 0) return { problems: [...configured.problems] };
    const declared = configured.arguments;
    const validator = compileArguments(declared);
    if (config.type !== 'mcp-tool' || mcp === undefined) return { declared, validator, mcpReport: undefined, warnings };
    const resolved = mcp.resolve(config['mcp-tool'], { arguments: declared, validator });
    warnings.push(...resolved.problems);
    return { declared: resolved.arguments, validator: resolved.validator, mcpReport: resolved.report, warnings };
  }
  const declared = BUILTIN_ARGUMENTS[config.type];
  const configured = entry.arguments;
  if (configured !== undefined && configured !== null && !(Array.isArray(configured) && configured.length === 0)) {
    const fixed = declared.map((a) => quote(a.name)).join(', ');
    warnings.push({ field: 'arguments', severity: 'warning', message: `ignored: type ${quote(config.type)} has the fixed argument ${fixed}` });
  }
  return { declared, validator: builtinValidator(config.type), mcpReport: undefined, warnings };
}
