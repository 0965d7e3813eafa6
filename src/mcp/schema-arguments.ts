/**
 * An MCP tool's input schema (from `tools/list`) → the arguments shown to the model and a validator for
 * its calls (design decision 9 (docs/design.md)). The validator keeps the declared-argument interface (`validate(args)` →
 * `{ok, value | errors, warnings}`, `src/tools/arguments/arguments.ts`) so the iteration treats both alike, and
 * checks with ajv, a standard JSON Schema validator: nested objects, lists, enums, required fields, ….
 *
 * Each distinct schema is compiled once and cached (bounded; the least recently used is dropped from
 * ajv too). Text values are coerced as for declared arguments, because history replays every argument as
 * a string: `"12"` → 12, `"True"` → true, JSON text → object or list; null or blank text for a
 * non-string top-level argument counts as "not given". Formats (`date-time`, …) are not checked.
 */
import { Ajv, type AnySchemaObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import {
  argsObject,
  type ArgumentIssue,
  type ArgumentValidation,
  type ArgumentValidator,
  deepFreeze,
  isPlainObject,
  notAnObject,
  parseJsonText,
  type ToolArgument,
} from '../tools/index.js';
import { quote } from '../errors/index.js';
import { issuesFromAjv } from './ajv-messages.js';
import { objectSchemaProblem, promptArguments, schemaProperties, type SchemaProperty } from './schema-properties.js';

/** A usable input schema, compiled. */
export interface DiscoveredSchema {
  /** The schema's JSON text: equal fingerprints mean equal schemas. */
  readonly fingerprint: string;
  /** The schema as listed by the server (frozen copy). */
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly properties: readonly SchemaProperty[];
  /** The prompt form of the top-level properties. */
  readonly arguments: readonly ToolArgument[];
  readonly validator: ArgumentValidator;
}

export type SchemaCompilation =
  | { readonly ok: true; readonly schema: DiscoveredSchema }
  | { readonly ok: false; readonly fingerprint: string; readonly message: string };

type AjvInstance = Ajv | Ajv2019 | Ajv2020;
type Dialect = 'draft-07' | '2019-09' | '2020-12';

const AJV_OPTIONS = {
  strict: false,
  allErrors: true,
  coerceTypes: true,
  // Schemas with the same $id (common: servers reuse ids) must not collide in one ajv instance.
  addUsedSchema: false,
  logger: false,
} as const;

function dialectOf(schema: Record<string, unknown>): Dialect {
  const declared = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (declared.includes('2020-12')) return '2020-12';
  if (declared.includes('2019-09')) return '2019-09';
  // Drafts 4–7, or no $schema: most MCP servers (zod-to-json-schema, pydantic) write draft-07-compatible schemas.
  return 'draft-07';
}


const BOOLEAN_TEXT: Readonly<Record<string, boolean>> = { true: true, false: false };

/** Top-level coercions ajv does not do: absent-ish values, Python booleans, JSON text of objects and lists. */
function prepare(property: SchemaProperty, raw: unknown): { keep: boolean; value: unknown } {
  const types = property.types;
  if (types.size === 0) return { keep: true, value: raw };
  if (raw === null) return { keep: types.has('null'), value: raw };
  if (typeof raw !== 'string' || types.has('string')) return { keep: true, value: raw };
  if (raw.trim() === '') return { keep: false, value: raw };
  if (types.has('boolean')) {
    const parsed = BOOLEAN_TEXT[raw.trim().toLowerCase()];
    if (parsed !== undefined) return { keep: true, value: parsed };
  }
  if (types.has('object') || types.has('array')) {
    const parsed = parseJsonText(raw);
    if ((types.has('object') && isPlainObject(parsed)) || (types.has('array') && Array.isArray(parsed))) {
      return { keep: true, value: parsed };
    }
  }
  return { keep: true, value: raw };
}

function makeValidator(
  validateFn: ValidateFunction,
  properties: readonly SchemaProperty[],
  closed: boolean,
  args: readonly ToolArgument[],
): ArgumentValidator {
  const byName = new Map(properties.map((p) => [p.name, p] as const));
  function validate(input: unknown): ArgumentValidation {
    const object = argsObject(input);
    if (object === undefined) return notAnObject(input);
    const warnings: ArgumentIssue[] = [];
    const entries: [string, unknown][] = [];
    for (const [name, raw] of Object.entries(object)) {
      const property = byName.get(name);
      if (property === undefined) {
        if (!closed && properties.length > 0) {
          warnings.push({ argument: name, message: `argument ${quote(name)} is not in the tool's input schema` });
        }
        entries.push([name, raw]);
        continue;
      }
      const prepared = prepare(property, raw);
      if (prepared.keep) entries.push([name, prepared.value]);
    }
    // ajv coerces in place: validate a copy. fromEntries keeps a "__proto__" argument an ordinary key.
    const data = structuredClone(Object.fromEntries(entries));
    if (validateFn(data)) return { ok: true, value: data, warnings };
    return { ok: false, errors: issuesFromAjv(validateFn.errors, data), warnings };
  }
  return Object.freeze({ arguments: args, validate });
}

interface CacheEntry {
  readonly compilation: SchemaCompilation;
  /** The object ajv compiled (its cache key), to drop it on eviction. */
  readonly compiled?: { readonly ajv: AjvInstance; readonly schema: AnySchemaObject };
}

/** Compiles input schemas once each; bounded, least recently used dropped first. */
export class SchemaCompiler {
  private readonly instances = new Map<Dialect, AjvInstance>();
  private readonly cache = new Map<string, CacheEntry>();

  /** @param capacity distinct schemas kept compiled. */
  constructor(readonly capacity = 1000) {}

  get size(): number {
    return this.cache.size;
  }

  private ajvFor(dialect: Dialect): AjvInstance {
    let ajv = this.instances.get(dialect);
    if (ajv === undefined) {
      ajv = dialect === '2020-12' ? new Ajv2020(AJV_OPTIONS) : dialect === '2019-09' ? new Ajv2019(AJV_OPTIONS) : new Ajv(AJV_OPTIONS);
      this.instances.set(dialect, ajv);
    }
    return ajv;
  }

  /** Compile (or fetch from the cache) one input schema. Never throws. */
  compile(inputSchema: unknown): SchemaCompilation {
    let fingerprint: string;
    try {
      fingerprint = JSON.stringify(inputSchema) ?? 'undefined';
    } catch (error) {
      return { ok: false, fingerprint: '', message: `the input schema is not JSON: ${(error as Error).message}` };
    }
    const cached = this.cache.get(fingerprint);
    if (cached !== undefined) {
      this.cache.delete(fingerprint);
      this.cache.set(fingerprint, cached);
      return cached.compilation;
    }
    const entry = this.compileNew(fingerprint, inputSchema);
    this.cache.set(fingerprint, entry);
    while (this.cache.size > this.capacity) {
      const oldest = this.cache.keys().next().value as string;
      const evicted = this.cache.get(oldest);
      this.cache.delete(oldest);
      if (evicted?.compiled) evicted.compiled.ajv.removeSchema(evicted.compiled.schema);
    }
    return entry.compilation;
  }

  private compileNew(fingerprint: string, inputSchema: unknown): CacheEntry {
    const problem = objectSchemaProblem(inputSchema);
    if (problem !== undefined) return { compilation: { ok: false, fingerprint, message: problem } };
    const source = JSON.parse(fingerprint) as Record<string, unknown>;
    const dialect = dialectOf(source);
    const forAjv = JSON.parse(fingerprint) as Record<string, unknown>;
    delete forAjv.$schema;
    const ajv = this.ajvFor(dialect);
    let validateFn: ValidateFunction;
    try {
      validateFn = ajv.compile(forAjv);
    } catch (error) {
      return {
        compilation: { ok: false, fingerprint, message: `the input schema is not valid JSON Schema (${dialect}): ${(error as Error).message}` },
      };
    }
    const properties = schemaProperties(source);
    const args = Object.freeze(promptArguments(properties, source));
    const closed = source.additionalProperties === false;
    const schema: DiscoveredSchema = Object.freeze({
      fingerprint,
      inputSchema: deepFreeze(source),
      properties: deepFreeze(properties),
      arguments: args,
      validator: makeValidator(validateFn, properties, closed, args),
    });
    return { compilation: { ok: true, schema }, compiled: { ajv, schema: forAjv } };
  }
}
