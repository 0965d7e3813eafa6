/**
 * The fixed arguments of the built-in tool types (docs/trustgraph-agent-notes.md §2.4). These types ignore a configured
 * `arguments` list; the LLM always sees exactly the argument below. Their validators are compiled once,
 * here, and shared by every tool of the type.
 */
import { compileArguments, type ArgumentValidator, type ToolArgument } from './arguments.js';
import type { ToolType } from '../config/tool-config-schema.js';

/** Tool types whose arguments are fixed by TrustGraph rather than configured. */
export type FixedArgumentsToolType = 'knowledge-query' | 'text-completion' | 'structured-query' | 'row-embeddings-query';

const argument = (name: string, description: string): ToolArgument =>
  Object.freeze({ name, type: 'string', description, required: true });

export const BUILTIN_ARGUMENTS: Readonly<Record<FixedArgumentsToolType, readonly ToolArgument[]>> = Object.freeze({
  'knowledge-query': Object.freeze([argument('question', 'The question to ask the knowledge base')]),
  'text-completion': Object.freeze([argument('question', 'The text prompt or question for completion')]),
  'structured-query': Object.freeze([
    argument('question', 'Natural language question about structured data (tables, databases, etc.)'),
  ]),
  'row-embeddings-query': Object.freeze([
    argument('query', 'Text to search for semantically similar values in the structured data index'),
  ]),
});

const BUILTIN_VALIDATORS: Readonly<Record<FixedArgumentsToolType, ArgumentValidator>> = Object.freeze({
  'knowledge-query': compileArguments(BUILTIN_ARGUMENTS['knowledge-query']),
  'text-completion': compileArguments(BUILTIN_ARGUMENTS['text-completion']),
  'structured-query': compileArguments(BUILTIN_ARGUMENTS['structured-query']),
  'row-embeddings-query': compileArguments(BUILTIN_ARGUMENTS['row-embeddings-query']),
});

/** True when the type's arguments are fixed (a configured `arguments` list is ignored). */
export function hasFixedArguments(type: ToolType): type is FixedArgumentsToolType {
  return Object.hasOwn(BUILTIN_ARGUMENTS, type);
}

/** The shared, precompiled validator of a built-in type. */
export function builtinValidator(type: FixedArgumentsToolType): ArgumentValidator {
  return BUILTIN_VALIDATORS[type];
}
