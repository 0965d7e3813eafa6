/**
 * The meta-router: for a first request without a `pattern`, ask the model for the task type
 * (`task-type-classify`) and then the pattern (`pattern-select`) among the task type's valid patterns, as
 * TrustGraph's MetaRouter does. With one task type (or one valid pattern) no call is made. A reply that names
 * nothing known, or a failed call, falls back to `general` (task type) and the first valid pattern (pattern),
 * the way TrustGraph falls back; the reason is returned so it can be logged and audited.
 */
import { DEFAULT_PATTERN, DEFAULT_TASK_TYPE, type PatternCatalog } from './catalog.js';
import { callTemplate, type PromptClient } from './template-prompt.js';
import type { UsageTracker } from '../usage.js';
import { errorMessage } from '../../errors/index.js';

export const TASK_TYPE_CLASSIFY_TEMPLATE = 'task-type-classify';
export const PATTERN_SELECT_TEMPLATE = 'pattern-select';

export interface RouteDecision {
  readonly pattern: string;
  readonly taskType: string;
  readonly framing: string;
  /** Why a fallback was taken, when one was. */
  readonly fallbacks: readonly string[];
}

/** TrustGraph's normalisation of the model's one-word reply. */
function normalise(text: string): string {
  return text.trim().toLowerCase().replace(/["']/g, '');
}

export async function routeQuestion(
  question: string,
  catalog: PatternCatalog,
  client: PromptClient,
  usage: UsageTracker,
): Promise<RouteDecision> {
  const fallbacks: string[] = [];

  let taskType = DEFAULT_TASK_TYPE;
  if (catalog.taskTypes.size <= 1) {
    taskType = catalog.taskTypes.keys().next().value ?? DEFAULT_TASK_TYPE;
  } else {
    try {
      const reply = await callTemplate(
        client,
        TASK_TYPE_CLASSIFY_TEMPLATE,
        { question, task_types: [...catalog.taskTypes.values()].map((t) => ({ name: t.id, description: t.description })) },
        usage,
      );
      const selected = normalise(reply.text);
      if (catalog.taskTypes.has(selected)) taskType = selected;
      else fallbacks.push(`the model named the unknown task type "${selected}"; using "${DEFAULT_TASK_TYPE}"`);
    } catch (error) {
      fallbacks.push(`task type classification failed (${errorMessage(error)}); using "${DEFAULT_TASK_TYPE}"`);
    }
  }
  const task = catalog.taskTypes.get(taskType);
  const framing = task?.framing ?? '';

  const valid = task?.validPatterns ?? [...catalog.patterns.keys()];
  const first = valid[0] ?? DEFAULT_PATTERN;
  if (valid.length <= 1) return { pattern: first, taskType, framing, fallbacks };
  let pattern = first;
  try {
    const reply = await callTemplate(
      client,
      PATTERN_SELECT_TEMPLATE,
      {
        question,
        task_type: taskType,
        task_type_description: task?.description ?? taskType,
        patterns: valid.flatMap((id) => {
          const entry = catalog.patterns.get(id);
          return entry ? [{ name: id, description: entry.description }] : [];
        }),
      },
      usage,
    );
    const selected = normalise(reply.text);
    if (valid.includes(selected)) pattern = selected;
    else fallbacks.push(`the model named the pattern "${selected}", not one of ${valid.join(', ')}; using "${first}"`);
  } catch (error) {
    fallbacks.push(`pattern selection failed (${errorMessage(error)}); using "${first}"`);
  }
  return { pattern, taskType, framing, fallbacks };
}
