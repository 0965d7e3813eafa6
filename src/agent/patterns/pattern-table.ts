/**
 * The patterns this agent runs. The dispatcher, the pattern catalog's checks, the group policy's
 * `allowed-patterns` check and the metric labels take the names from here; a new pattern is one file beside
 * these and one line below. A request naming none of them runs ReAct, as TrustGraph falls back to ReAct for a
 * pattern it does not know.
 */
import type { Pattern } from './pattern.js';
import { planThenExecute } from './plan-then-execute.js';
import { react } from './react.js';
import { supervisor } from './supervisor.js';

export const PATTERNS: readonly Pattern[] = [react, planThenExecute, supervisor];

export const PATTERN_IDS: readonly string[] = PATTERNS.map((pattern) => pattern.id);

/** The pattern that runs a request naming `id`: its own when this agent runs it, else ReAct. */
export function patternFor(id: string): Pattern {
  return PATTERNS.find((pattern) => pattern.id === id) ?? react;
}
