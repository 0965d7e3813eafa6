/**
 * What the ReAct parsers (`react-parser.ts`, `streaming-parser.ts`) make of the model's text: an action
 * to run, a final answer, or a parse failure that the agent hands back to the model as an observation.
 */

/**
 * The action name under which a parse failure is recorded in the history (TrustGraph's name). No tool
 * runs for it; its observation is {@link parseFailureObservation}.
 */
export const PARSE_ERROR_ACTION = '__parse_error__';

/** Every {@link ParseFailure} message starts with this, as TrustGraph's `tool_error` does. */
export const PARSE_ERROR_PREFIX = 'LLM parse error: ';

/** `Thought: … / Action: name / Args: {…}`. */
export interface ParsedAction {
  readonly kind: 'action';
  /** The thought text; `""` when the model wrote none. */
  readonly thought: string;
  /** The tool name, trimmed, with surrounding `"` removed. Never empty. */
  readonly name: string;
  /** The decoded `Args` object; `{}` when `Args` was missing, empty or `null`. */
  readonly args: Record<string, unknown>;
}

/** `Thought: … / Final Answer: …`. */
export interface ParsedFinal {
  readonly kind: 'final';
  readonly thought: string;
  /** The answer text, trimmed as a whole; inner newlines and indentation are kept. Never JSON-decoded. */
  readonly answer: string;
}

/**
 * The model's text could not be understood. The agent records it as action {@link PARSE_ERROR_ACTION}
 * with observation `Error: <message>`, so the model can correct itself on the next iteration.
 */
export interface ParseFailure {
  readonly kind: 'parse-error';
  /** The thought parsed before the failure (`""` if none); TrustGraph always records `""`. */
  readonly thought: string;
  /**
   * `LLM parse error: ` followed by one of `Invalid JSON in Args: …`, `Args must be a JSON object, got …`,
   * `Response has thought but no action or final answer: …`, `Could not parse response: …` or
   * `Expected string response, got …`.
   */
  readonly message: string;
}

export type ParsedResponse = ParsedAction | ParsedFinal | ParseFailure;

/** The observation recorded for a parse failure: `Error: <message>`. */
export function parseFailureObservation(failure: ParseFailure): string {
  return `Error: ${failure.message}`;
}
