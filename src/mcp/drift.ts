/**
 * Drift between an MCP tool's declared arguments (the pinned contract, design decision 9 (docs/design.md)) and the input
 * schema its server lists now. Declared arguments stay in force; each difference is reported so that an
 * operator can update one side:
 *
 * - `missing`: declared, but the server's schema has no such property;
 * - `extra`: a property of the server's schema that is not declared (worse when the server requires it);
 * - `type`: the declared type is not one the server accepts (a declared `integer` where the server takes
 *   any `number` is fine);
 * - `required`: required on one side, optional on the other.
 */
import type { ToolArgument } from '../tools/index.js';
import { quote } from '../errors/index.js';
import type { JsonType, SchemaProperty } from './schema-properties.js';

export const DRIFT_KINDS = ['missing', 'extra', 'type', 'required'] as const;
export type DriftKind = (typeof DRIFT_KINDS)[number];

export interface DriftFinding {
  readonly argument: string;
  readonly kind: DriftKind;
  /** The declared side: a type, `required`/`optional`, or null when not declared. */
  readonly declared: string | null;
  /** The server's side, likewise. */
  readonly server: string | null;
  /** One sentence, e.g. `argument "limit": declared integer, the server's schema says string`. */
  readonly message: string;
}

function typeText(types: ReadonlySet<JsonType>): string {
  return types.size === 0 ? 'any' : [...types].join(' or ');
}

function accepts(serverTypes: ReadonlySet<JsonType>, declared: ToolArgument['type']): boolean {
  if (serverTypes.size === 0 || serverTypes.has(declared)) return true;
  return declared === 'integer' && serverTypes.has('number');
}

const requiredText = (required: boolean): string => (required ? 'required' : 'optional');

/** Every difference, declared arguments first (in declaration order), then the server's extra properties. */
export function compareArguments(declared: readonly ToolArgument[], server: readonly SchemaProperty[]): DriftFinding[] {
  const findings: DriftFinding[] = [];
  const byName = new Map(server.map((p) => [p.name, p] as const));
  const declaredNames = new Set(declared.map((a) => a.name));
  for (const argument of declared) {
    const property = byName.get(argument.name);
    const name = quote(argument.name);
    if (property === undefined) {
      findings.push({
        argument: argument.name,
        kind: 'missing',
        declared: argument.type,
        server: null,
        message: `argument ${name} is declared (${argument.type}) but the server's input schema has no such property`,
      });
      continue;
    }
    if (!accepts(property.types, argument.type)) {
      findings.push({
        argument: argument.name,
        kind: 'type',
        declared: argument.type,
        server: typeText(property.types),
        message: `argument ${name} is declared ${argument.type} but the server's input schema says ${typeText(property.types)}`,
      });
    }
    if (argument.required !== property.required) {
      findings.push({
        argument: argument.name,
        kind: 'required',
        declared: requiredText(argument.required),
        server: requiredText(property.required),
        message: `argument ${name} is declared ${requiredText(argument.required)} but the server's input schema makes it ${requiredText(property.required)}`,
      });
    }
  }
  for (const property of server) {
    if (declaredNames.has(property.name)) continue;
    findings.push({
      argument: property.name,
      kind: 'extra',
      declared: null,
      server: `${typeText(property.types)}, ${requiredText(property.required)}`,
      message:
        `the server's input schema has ${property.required ? 'a required' : 'an optional'} property ${quote(property.name)} ` +
        `(${typeText(property.types)}) that is not declared` +
        (property.required ? '; calls will fail until it is declared' : ''),
    });
  }
  return findings;
}
