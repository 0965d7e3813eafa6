/**
 * Tool arguments (MA-1..MA-6 (docs/requirements.md), design decision 8 (docs/design.md)): the declared list, its prompt form, and a validator
 * compiled once when the registry is built.
 *
 * The validator checks the object the LLM wrote after `Args:`. Values may arrive as text — the history
 * TrustGraph replays to the LLM holds every argument as a string, and models imitate it — so text is
 * coerced: `"12"` → 12 for `number`/`integer`, `"true"`/`"False"` → booleans, JSON text → object/list.
 * Undeclared arguments stay in `value` (TrustGraph forwards them) and are reported as warnings, one per name;
 * the iteration drops, passes or rejects them (`--undeclared-arguments`).
 */
import { quote, showValue } from '../../errors/index.js';
import { argsObject, isPlainObject, parseJsonText } from './args-object.js';
import type { ProblemDetail } from '../config/problems.js';
import type { ArgumentType, ToolArgumentConfig } from '../config/tool-config-schema.js';

/** A declared argument, normalized (`required` defaults to true, `description` to ""). */
export interface ToolArgument {
  readonly name: string;
  readonly type: ArgumentType;
  readonly description: string;
  readonly required: boolean;
}

/** How an argument is shown to the LLM under its tool: `{name, type, description, required}`. */
export type PromptArgument = ToolArgument;

/** One finding about an argument; `argument` is null when the whole `Args` value is at fault. */
export interface ArgumentIssue {
  readonly argument: string | null;
  readonly message: string;
}

export type ArgumentValidation =
  | {
      readonly ok: true;
      /** The arguments: declared ones coerced to their type, undeclared ones unchanged. */
      readonly value: Readonly<Record<string, unknown>>;
      /** Undeclared arguments, one warning each (`argument` names it). */
      readonly warnings: readonly ArgumentIssue[];
    }
  | {
      readonly ok: false;
      /** Every argument that was missing or of the wrong type, in declaration order. */
      readonly errors: readonly ArgumentIssue[];
      readonly warnings: readonly ArgumentIssue[];
    };

export interface ArgumentValidator {
  /** The declared arguments this validator checks (empty: any arguments are accepted). */
  readonly arguments: readonly ToolArgument[];
  /** Check and coerce the LLM's `Args` object. Never throws. */
  validate(args: unknown): ArgumentValidation;
}

type Coerced = { ok: true; value: unknown } | { ok: false };

const NUMBER_TEXT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const BOOLEAN_TEXT: Readonly<Record<string, boolean>> = { true: true, false: false };

function parseNumberText(text: string): number | undefined {
  const trimmed = text.trim();
  if (!NUMBER_TEXT.test(trimmed)) return undefined;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : undefined;
}

/** What each type accepts, as said in messages, and how a value is coerced to it. */
const COERCERS: Readonly<Record<ArgumentType, { phrase: string; coerce(value: unknown): Coerced }>> = {
  string: {
    phrase: 'a string',
    coerce: (value) => {
      if (typeof value === 'string') return { ok: true, value };
      if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean') {
        return { ok: true, value: String(value) };
      }
      return { ok: false };
    },
  },
  number: {
    phrase: 'a number',
    coerce: (value) => {
      const number = typeof value === 'string' ? parseNumberText(value) : value;
      return typeof number === 'number' && Number.isFinite(number) ? { ok: true, value: number } : { ok: false };
    },
  },
  integer: {
    phrase: 'an integer',
    coerce: (value) => {
      // "12.0" (Python's rendering of a float) is accepted as 12.
      const number = typeof value === 'string' ? parseNumberText(value) : value;
      return typeof number === 'number' && Number.isSafeInteger(number) ? { ok: true, value: number } : { ok: false };
    },
  },
  boolean: {
    phrase: 'a boolean (true or false)',
    coerce: (value) => {
      if (typeof value === 'boolean') return { ok: true, value };
      if (typeof value !== 'string') return { ok: false };
      const parsed = BOOLEAN_TEXT[value.trim().toLowerCase()];
      return parsed === undefined ? { ok: false } : { ok: true, value: parsed };
    },
  },
  object: {
    phrase: 'a JSON object',
    coerce: (value) => {
      const parsed = typeof value === 'string' ? parseJsonText(value) : value;
      return isPlainObject(parsed) ? { ok: true, value: parsed } : { ok: false };
    },
  },
  array: {
    phrase: 'a JSON list',
    coerce: (value) => {
      const parsed = typeof value === 'string' ? parseJsonText(value) : value;
      return Array.isArray(parsed) ? { ok: true, value: parsed } : { ok: false };
    },
  },
};

/** Null, or blank text for a non-string type, count as "not given". */
function isAbsent(value: unknown, type: ArgumentType): boolean {
  if (value === undefined || value === null) return true;
  return type !== 'string' && typeof value === 'string' && value.trim() === '';
}


const EMPTY: readonly ToolArgument[] = Object.freeze([]);

/** The failed validation of `Args` that is not an object (every validator's answer to it). */
export function notAnObject(args: unknown): ArgumentValidation {
  return {
    ok: false,
    errors: [{ argument: null, message: `arguments must be a JSON object of name → value, got ${showValue(args)}` }],
    warnings: [],
  };
}

/**
 * Compile declared arguments into a validator. Call once per tool (the registry does it at build
 * time); `validate` then costs one pass over the LLM's arguments.
 */
export function compileArguments(declared: readonly ToolArgument[]): ArgumentValidator {
  const list = declared.length === 0 ? EMPTY : Object.freeze(declared.map(toPromptArgument));
  const byName = new Map(list.map((a) => [a.name, { argument: a, coercer: COERCERS[a.type] }] as const));

  function validate(args: unknown): ArgumentValidation {
    const input = argsObject(args);
    if (input === undefined) return notAnObject(args);
    const errors: ArgumentIssue[] = [];
    const warnings: ArgumentIssue[] = [];
    const entries: [string, unknown][] = [];
    for (const [name, raw] of Object.entries(input)) {
      const known = byName.get(name);
      if (known === undefined) {
        if (list.length > 0) {
          warnings.push({
            argument: name,
            message: `argument ${quote(name)} is not declared by the tool`,
          });
        }
        entries.push([name, raw]);
        continue;
      }
      if (isAbsent(raw, known.argument.type)) continue;
      const coerced = known.coercer.coerce(raw);
      if (coerced.ok) entries.push([name, coerced.value]);
      else errors.push({ argument: name, message: `argument ${quote(name)} must be ${known.coercer.phrase}, got ${showValue(raw)}` });
    }
    for (const argument of list) {
      if (argument.required && (!Object.hasOwn(input, argument.name) || isAbsent(input[argument.name], argument.type))) {
        errors.push({ argument: argument.name, message: `argument ${quote(argument.name)} is required` });
      }
    }
    if (errors.length > 0) {
      const order = new Map(list.map((a, i) => [a.name, i]));
      errors.sort((a, b) => (order.get(a.argument ?? '') ?? 0) - (order.get(b.argument ?? '') ?? 0));
      return { ok: false, errors, warnings };
    }
    // fromEntries defines own properties, so a "__proto__" argument stays a plain key.
    return { ok: true, value: Object.fromEntries(entries), warnings };
  }

  return Object.freeze({ arguments: list, validate });
}

/** Normalize declared arguments from configuration; duplicate names are a problem. */
export function argumentsFromConfig(
  configs: readonly ToolArgumentConfig[] | null | undefined,
): { arguments: readonly ToolArgument[]; problems: readonly ProblemDetail[] } {
  if (!configs || configs.length === 0) return { arguments: EMPTY, problems: [] };
  const problems: ProblemDetail[] = [];
  const seen = new Map<string, number>();
  const list: ToolArgument[] = [];
  configs.forEach((config, index) => {
    const first = seen.get(config.name);
    if (first !== undefined) {
      problems.push({
        field: `arguments[${index}].name`,
        message: `duplicate argument name ${quote(config.name)} (also arguments[${first}])`,
      });
      return;
    }
    seen.set(config.name, index);
    list.push({
      name: config.name,
      type: config.type,
      description: config.description ?? '',
      required: config.required ?? true,
    });
  });
  return { arguments: Object.freeze(list.map((a) => Object.freeze(a))), problems };
}

/** The prompt form of one argument: exactly `{name, type, description, required}`. */
export function toPromptArgument(argument: ToolArgument): PromptArgument {
  return Object.freeze({
    name: argument.name,
    type: argument.type,
    description: argument.description,
    required: argument.required,
  });
}
