/**
 * The top-level properties of an MCP tool's input schema (a JSON Schema object), read for two uses: the
 * prompt form of each argument (`{name, type, description, required}`, design decision 9 (docs/design.md)) and the drift
 * comparison with declared arguments. Only what a reader needs is interpreted here — types, `required`,
 * descriptions, enums and local `$ref`s; validation proper is ajv's job (`schema-arguments.ts`).
 */
import { type ArgumentType, frozenSet, type ToolArgument } from '../tools/index.js';

/** The JSON types a schema may name. */
export type JsonType = ArgumentType | 'null';

const JSON_TYPES: ReadonlySet<string> = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);

/** One top-level property of an input schema. */
export interface SchemaProperty {
  readonly name: string;
  /** The JSON types the schema accepts; empty when it accepts any value (no type constraint found). */
  readonly types: ReadonlySet<JsonType>;
  readonly required: boolean;
  /** `description` (or `title`) from the schema, "" when absent. */
  readonly description: string;
  /** The allowed values, when the schema lists them (`enum`, `const`). */
  readonly values?: readonly unknown[];
  /** The property's own schema, `$ref`s resolved one level. */
  readonly schema: Readonly<Record<string, unknown>>;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Follows local references (`#/$defs/x`, `#/definitions/x`, any JSON pointer into the root), at most 8 hops. */
export function resolveRef(schema: unknown, root: Json): Json | undefined {
  let current = schema;
  for (let hops = 0; hops < 8 && isObject(current) && typeof current.$ref === 'string'; hops++) {
    const ref = current.$ref;
    if (!ref.startsWith('#')) return current;
    let target: unknown = root;
    for (const raw of ref.slice(1).split('/').slice(1)) {
      const segment = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      target = isObject(target) ? target[segment] : Array.isArray(target) ? target[Number(segment)] : undefined;
    }
    if (!isObject(target)) return current;
    current = target;
  }
  return isObject(current) ? current : undefined;
}

function jsonTypeOf(value: unknown): JsonType | undefined {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isInteger(value) ? 'integer' : 'number';
    case 'object':
      return 'object';
    default:
      return undefined;
  }
}

/** The JSON types a (sub)schema accepts; an empty set means "any". */
export function typesOf(schema: unknown, root: Json, depth = 0): Set<JsonType> {
  const types = new Set<JsonType>();
  const node = resolveRef(schema, root);
  if (node === undefined || depth > 8) return types;
  const declared = node.type;
  if (typeof declared === 'string' && JSON_TYPES.has(declared)) types.add(declared as JsonType);
  if (Array.isArray(declared)) for (const t of declared) if (typeof t === 'string' && JSON_TYPES.has(t)) types.add(t as JsonType);
  if (types.size > 0) return types;
  const listed = Object.hasOwn(node, 'const') ? [node.const] : Array.isArray(node.enum) ? node.enum : undefined;
  if (listed !== undefined) {
    for (const value of listed) {
      const type = jsonTypeOf(value);
      if (type !== undefined) types.add(type);
    }
    // An integer value is also a number: say "number" once when both kinds appear.
    if (types.has('integer') && types.has('number')) types.delete('integer');
    return types;
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = node[key];
    if (!Array.isArray(branches)) continue;
    for (const branch of branches) {
      const branchTypes = typesOf(branch, root, depth + 1);
      if (branchTypes.size === 0) return new Set(); // one branch accepts anything
      branchTypes.forEach((t) => types.add(t));
    }
    return types;
  }
  if (Array.isArray(node.allOf)) {
    for (const branch of node.allOf) {
      const branchTypes = typesOf(branch, root, depth + 1);
      if (branchTypes.size > 0) return branchTypes;
    }
  }
  if (isObject(node.properties)) types.add('object');
  else if (node.items !== undefined || node.prefixItems !== undefined) types.add('array');
  return types;
}

/** The one argument type shown to the model for a set of JSON types. */
export function argumentTypeOf(types: ReadonlySet<JsonType>): ArgumentType | undefined {
  const real = [...types].filter((t): t is ArgumentType => t !== 'null');
  if (real.length === 0) return undefined;
  if (real.length === 1) return real[0];
  if (real.every((t) => t === 'number' || t === 'integer')) return 'number';
  // Several kinds: the most structured one, which can carry the others' information.
  for (const t of ['object', 'array', 'string', 'number', 'integer', 'boolean'] as const) if (real.includes(t)) return t;
  return undefined;
}

function textOf(node: Json): string {
  const text = typeof node.description === 'string' ? node.description : typeof node.title === 'string' ? node.title : '';
  return text.trim();
}

function valuesOf(node: Json): readonly unknown[] | undefined {
  if (Object.hasOwn(node, 'const')) return [node.const];
  return Array.isArray(node.enum) ? node.enum : undefined;
}

const MAX_HINT = 240;

function typeWords(types: ReadonlySet<JsonType>): string {
  return types.size === 0 ? 'any' : [...types].join(' or ');
}

/** `since (string, required), tags (array)` for an object schema's fields; "" when it has none. */
function fieldsHint(node: Json, root: Json): string {
  if (!isObject(node.properties)) return '';
  const required = new Set(Array.isArray(node.required) ? node.required.filter((r) => typeof r === 'string') : []);
  return Object.entries(node.properties)
    .map(([name, sub]) => `${name} (${typeWords(typesOf(sub, root))}${required.has(name) ? ', required' : ''})`)
    .join(', ');
}

/** The description shown to the model: the schema's own, plus allowed values and the shape of nested values. */
function promptDescription(property: SchemaProperty, root: Json): string {
  const parts = property.description === '' ? [] : [property.description];
  if (property.values !== undefined) {
    parts.push(`One of: ${property.values.map((v) => JSON.stringify(v)).join(', ')}.`);
  }
  const type = argumentTypeOf(property.types);
  if (property.types.size === 0) parts.push('Any JSON value.');
  else if (type === 'object') {
    const fields = fieldsHint(property.schema, root);
    if (fields !== '') parts.push(`A JSON object with fields: ${fields}.`);
  } else if (type === 'array') {
    const items = resolveRef(property.schema.items, root);
    if (items !== undefined) {
      const fields = fieldsHint(items, root);
      parts.push(fields !== '' ? `A JSON list of objects with fields: ${fields}.` : `A JSON list of ${typeWords(typesOf(items, root))}.`);
    }
  }
  const text = parts.join(' ');
  return text.length > MAX_HINT * 2 ? `${text.slice(0, MAX_HINT * 2)}…` : text;
}

/** The problem that makes an input schema unusable, or undefined when it is a usable object schema. */
export function objectSchemaProblem(schema: unknown): string | undefined {
  if (!isObject(schema)) return `the input schema is not a JSON object`;
  const type = schema.type;
  if (type !== undefined && type !== 'object' && !(Array.isArray(type) && type.includes('object'))) {
    return `the input schema must have "type": "object", has ${JSON.stringify(type)}`;
  }
  if (schema.properties !== undefined && !isObject(schema.properties)) return `"properties" of the input schema is not a JSON object`;
  if (schema.required !== undefined && !(Array.isArray(schema.required) && schema.required.every((r) => typeof r === 'string'))) {
    return `"required" of the input schema is not a list of property names`;
  }
  return undefined;
}

/** The top-level properties, in schema order. Assumes `objectSchemaProblem(schema)` found nothing. */
export function schemaProperties(schema: Json): SchemaProperty[] {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  return Object.entries(properties).map(([name, raw]) => {
    const node = resolveRef(raw, schema) ?? {};
    const values = valuesOf(node);
    return {
      name,
      types: frozenSet(typesOf(node, schema)),
      required: required.has(name),
      description: textOf(node),
      ...(values === undefined ? {} : { values }),
      schema: node,
    };
  });
}

/** The prompt form of the properties: `{name, type, description, required}` (untyped ones shown as `string`). */
export function promptArguments(properties: readonly SchemaProperty[], root: Json): ToolArgument[] {
  return properties.map((property) =>
    Object.freeze({
      name: property.name,
      type: argumentTypeOf(property.types) ?? 'string',
      description: promptDescription(property, root),
      required: property.required,
    }),
  );
}
