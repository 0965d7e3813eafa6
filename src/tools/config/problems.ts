/**
 * What was wrong with a workspace's tool configuration. Building a registry never throws: every
 * invalid `tool` or `tool-service` entry becomes one or more problems (logged, counted and listed over
 * HTTP) and the rest of the configuration loads (design decision 5 (docs/design.md)).
 */

/** The TrustGraph config type an entry came from. */
export type ConfigKind = 'tool' | 'tool-service';

/**
 * `error`: the entry was left out of the registry. `warning`: the entry loaded, but part of it is
 * ignored (for example `arguments` on a type whose arguments are fixed).
 */
export type ProblemSeverity = 'error' | 'warning';

export interface Problem {
  readonly workspace: string;
  readonly kind: ConfigKind;
  /** The config key of the entry (`""` when the whole config type was unreadable). */
  readonly key: string;
  /** The tool's `name`, when it could be read. */
  readonly name?: string;
  /** Path of the offending field inside the entry, e.g. `applicable-states` or `arguments[1].type`. */
  readonly field?: string;
  readonly severity: ProblemSeverity;
  /** What was wrong, without the location, e.g. `expected a list of strings, got a string ("x")`. */
  readonly message: string;
  /** The whole sentence: location and message (see `formatProblem`). */
  readonly text: string;
}

/** The fields of a problem before it is located in a workspace and rendered. */
export interface ProblemDetail {
  readonly field?: string;
  readonly severity?: ProblemSeverity;
  readonly message: string;
}

/**
 * Renders a problem as one sentence naming the workspace, the config key, the tool name and the field:
 * `workspace "default", tool key "kq" (name "knowledge_query"): field "applicable-states": expected a list of strings`.
 */
export function formatProblem(problem: Omit<Problem, 'text'>): string {
  const name = problem.name === undefined ? '' : ` (name ${JSON.stringify(problem.name)})`;
  const field = problem.field === undefined ? '' : `field ${JSON.stringify(problem.field)}: `;
  const warning = problem.severity === 'warning' ? 'warning: ' : '';
  return (
    `workspace ${JSON.stringify(problem.workspace)}, ${problem.kind} key ${JSON.stringify(problem.key)}${name}: ` +
    `${warning}${field}${problem.message}`
  );
}

/** Builds a frozen `Problem` with its `text`. */
export function makeProblem(
  location: { workspace: string; kind: ConfigKind; key: string; name?: string | undefined },
  detail: ProblemDetail,
): Problem {
  const base: Omit<Problem, 'text'> = {
    workspace: location.workspace,
    kind: location.kind,
    key: location.key,
    ...(location.name === undefined ? {} : { name: location.name }),
    ...(detail.field === undefined ? {} : { field: detail.field }),
    severity: detail.severity ?? 'error',
    message: detail.message,
  };
  return Object.freeze({ ...base, text: formatProblem(base) });
}
