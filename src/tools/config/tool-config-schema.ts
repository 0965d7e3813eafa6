/**
 * The shape of one TrustGraph `tool` config entry (docs/trustgraph-agent-notes.md §2.3–2.6), as a zod 4 schema: a
 * discriminated union on `type` over the seven tool types. It describes the *input* (what the config
 * service holds, after JSON decoding); normalization into the registry's `Tool` happens in
 * `load-tool.ts`. `schemas/tool.schema.json` is generated from it (`npm run schemas`).
 *
 * Tolerance and strictness, compared with TrustGraph:
 * - unknown keys are kept everywhere (they may be tool-service config params or future fields);
 * - `null` is accepted wherever a key is optional and means "absent";
 * - `name` must be a non-empty string (TrustGraph accepts anything, which yields a tool the LLM cannot name);
 * - `group` and the state lists must be lists of strings (a bare string is rejected, as TrustGraph does);
 * - the type-specific reference a tool cannot work without (`mcp-tool`, `template`, `schema-name`,
 *   `service`) is required; argument declarations are checked (`name`, `type`).
 */
import { z } from 'zod';
import { describeValue } from '../../errors/index.js';

/** The seven tool types TrustGraph's ReAct agent knows, in its documentation order. */
export const TOOL_TYPES = [
  'knowledge-query',
  'text-completion',
  'mcp-tool',
  'prompt',
  'structured-query',
  'row-embeddings-query',
  'tool-service',
] as const;
export type ToolType = (typeof TOOL_TYPES)[number];

/** The argument types a tool may declare (design decision 8 (docs/design.md)). */
export const ARGUMENT_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array'] as const;
export type ArgumentType = (typeof ARGUMENT_TYPES)[number];

/** The spec's name for `applicable-states`, accepted as an alias (design decision 2 (docs/design.md)). */
export const STATES_ALIAS_KEY = 'available_in_states';
export const STATES_KEY = 'applicable-states';

const oneOf = (values: readonly string[]): string => values.join(', ');

/** A string with at least one non-blank character. */
function nonEmptyString(whenMissing: string) {
  return z
    .string({
      error: (issue) =>
        issue.input === undefined
          ? `required: ${whenMissing}`
          : `expected a non-empty string, got ${describeValue(issue.input)}`,
    })
    .regex(/\S/, { error: 'expected a non-empty string' });
}

/** A list of strings; a bare string gets a hint on how to write it. */
/** A list of strings; a bare string is refused with the fix (TrustGraph's `group` and state lists). */
export function stringList(what: string) {
  return z.array(z.string(), {
    error: (issue) =>
      typeof issue.input === 'string'
        ? `expected a list of ${what}, got a string; write [${JSON.stringify(issue.input)}]`
        : `expected a list of ${what}, got ${describeValue(issue.input)}`,
  });
}

const optionalString = (description: string) => z.string().nullable().optional().meta({ description });

/** One declared argument: `{name, type, description, required?}`; unknown keys are kept. */
export const ToolArgumentConfigSchema = z
  .looseObject({
    name: nonEmptyString('the argument name the LLM uses in Args').meta({
      description: 'Argument name, as the LLM must write it in Args',
    }),
    type: z
      .enum(ARGUMENT_TYPES, {
        error: (issue) =>
          issue.input === undefined
            ? `required: one of ${oneOf(ARGUMENT_TYPES)}`
            : `expected one of ${oneOf(ARGUMENT_TYPES)}, got ${describeValue(issue.input)}`,
      })
      .meta({ description: 'Value type; values arriving as text are coerced (e.g. "12" for an integer)' }),
    description: optionalString('Shown to the LLM under the tool'),
    required: z
      .boolean()
      .nullable()
      .optional()
      .meta({ description: 'Whether the LLM must supply the argument', default: true }),
  })
  .meta({ description: 'An argument the LLM passes to the tool' });

const argumentsField = z
  .array(ToolArgumentConfigSchema, {
    error: (issue) => `expected a list of argument objects, got ${describeValue(issue.input)}`,
  })
  .nullable()
  .optional()
  .meta({ description: 'Arguments the LLM must supply (shown in the prompt and validated before the call)' });

/** Keys every tool type reads. */
const commonShape = {
  name: nonEmptyString('the tool name the LLM writes after "Action:"').meta({
    description: 'Tool name shown to the LLM; the LLM must echo it exactly after "Action:"',
  }),
  description: optionalString('What the tool does, shown to the LLM'),
  group: stringList('group names')
    .nullable()
    .optional()
    .meta({
      description: 'Groups the tool belongs to; a request sees it when it asks for one of them, or for "*"',
      default: ['default'],
    }),
  state: optionalString('State the conversation moves to after the tool has run successfully'),
  [STATES_KEY]: stringList('state names')
    .nullable()
    .optional()
    .meta({ description: 'States in which the tool is offered; "*" or absent means every state' }),
  [STATES_ALIAS_KEY]: stringList('state names')
    .nullable()
    .optional()
    .meta({ description: `The tool-group spec's name for "${STATES_KEY}"; both present must agree` }),
};

const collectionField = optionalString('Collection to query (default "default"); the request\'s collection is not used');

export const KnowledgeQueryToolConfigSchema = z.looseObject({
  type: z.literal('knowledge-query'),
  ...commonShape,
  collection: collectionField,
});

export const TextCompletionToolConfigSchema = z.looseObject({
  type: z.literal('text-completion'),
  ...commonShape,
});

export const McpToolConfigSchema = z.looseObject({
  type: z.literal('mcp-tool'),
  ...commonShape,
  'mcp-tool': nonEmptyString(
    'the key of an entry in config type "mcp" (TrustGraph reads "mcp-tool", not the spec\'s "mcp_tool_id")',
  ).meta({ description: 'Key of the MCP server entry in config type "mcp"' }),
  arguments: argumentsField,
});

export const PromptToolConfigSchema = z.looseObject({
  type: z.literal('prompt'),
  ...commonShape,
  template: nonEmptyString('the id of a prompt template').meta({ description: 'Prompt template id' }),
  arguments: argumentsField,
});

export const StructuredQueryToolConfigSchema = z.looseObject({
  type: z.literal('structured-query'),
  ...commonShape,
  collection: collectionField,
});

/** `limit`: a positive integer, or its decimal text (TrustGraph passes it through `int()`). */
const limitField = z
  .union([z.number().int().min(1), z.string().regex(/^\s*\+?0*[1-9][0-9]*\s*$/)], {
    error: (issue) => `expected a positive integer or its decimal text, got ${describeValue(issue.input)}`,
  })
  .nullable()
  .optional()
  .meta({ description: 'Maximum number of matches', default: 10 });

export const RowEmbeddingsQueryToolConfigSchema = z.looseObject({
  type: z.literal('row-embeddings-query'),
  ...commonShape,
  'schema-name': nonEmptyString('the name of the row schema to search').meta({
    description: 'Row schema whose embeddings index is searched',
  }),
  collection: collectionField,
  'index-name': optionalString('Index to search within the schema (all indexes when absent)'),
  limit: limitField,
});

export const ToolServiceToolConfigSchema = z
  .looseObject({
    type: z.literal('tool-service'),
    ...commonShape,
    service: nonEmptyString('the key of an entry in config type "tool-service"').meta({
      description: 'Key of the descriptor in config type "tool-service"',
    }),
    arguments: argumentsField,
  })
  .meta({ description: "Further keys named by the service's config-params are passed to the service as its config" });

function statesConflict(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a);
  const right = new Set(b);
  if (left.size !== right.size) return true;
  for (const state of left) if (!right.has(state)) return true;
  return false;
}

/** One `tool` config entry, any of the seven types. */
export const ToolConfigSchema = z
  .discriminatedUnion(
    'type',
    [
      KnowledgeQueryToolConfigSchema,
      TextCompletionToolConfigSchema,
      McpToolConfigSchema,
      PromptToolConfigSchema,
      StructuredQueryToolConfigSchema,
      RowEmbeddingsQueryToolConfigSchema,
      ToolServiceToolConfigSchema,
    ],
    {
      error: (issue) => {
        if (issue.code !== 'invalid_union') return undefined;
        const input: unknown = issue.input;
        const type = input !== null && typeof input === 'object' ? (input as Record<string, unknown>).type : input;
        if (type === undefined) return `required: one of ${oneOf(TOOL_TYPES)}`;
        if (typeof type === 'string') return `unknown tool type ${JSON.stringify(type)}; expected one of ${oneOf(TOOL_TYPES)}`;
        return `expected one of ${oneOf(TOOL_TYPES)}, got ${describeValue(type)}`;
      },
    },
  )
  .superRefine((tool, ctx) => {
    const primary = tool[STATES_KEY];
    const alias = tool[STATES_ALIAS_KEY];
    if (primary && alias && statesConflict(primary, alias)) {
      ctx.addIssue({
        code: 'custom',
        path: [STATES_ALIAS_KEY],
        message:
          `conflicts with "${STATES_KEY}" (${JSON.stringify(alias)} vs ${JSON.stringify(primary)}); ` +
          `keep one of the two keys`,
      });
    }
  })
  .meta({
    title: 'TrustGraph agent tool',
    description:
      'One value of TrustGraph config type "tool" (the config key orders tools; "name" identifies them). ' +
      'Unknown keys are kept.',
  });

/** A `tool` entry as written in configuration (before defaults). */
export type ToolConfigInput = z.input<typeof ToolConfigSchema>;
/** A `tool` entry after schema validation (still un-normalized: nulls, aliases, text limits). */
export type ToolConfig = z.output<typeof ToolConfigSchema>;
export type ToolArgumentConfig = z.output<typeof ToolArgumentConfigSchema>;

const keysOf = (schema: { shape: object }): readonly string[] => Object.freeze(Object.keys(schema.shape));

/** The keys each tool type reads (a tool-service tool also its service's config params): the linter's known keys. */
export const TOOL_CONFIG_KEYS: Readonly<Record<ToolType, readonly string[]>> = {
  'knowledge-query': keysOf(KnowledgeQueryToolConfigSchema),
  'text-completion': keysOf(TextCompletionToolConfigSchema),
  'mcp-tool': keysOf(McpToolConfigSchema),
  prompt: keysOf(PromptToolConfigSchema),
  'structured-query': keysOf(StructuredQueryToolConfigSchema),
  'row-embeddings-query': keysOf(RowEmbeddingsQueryToolConfigSchema),
  'tool-service': keysOf(ToolServiceToolConfigSchema),
};

/** The keys of an argument declaration. */
export const ARGUMENT_CONFIG_KEYS = keysOf(ToolArgumentConfigSchema);
