/**
 * `trustgraph-base/trustgraph/schema/config.py` (TrustGraph 2.11.1, unchanged since 2.8): ConfigRequest, ConfigResponse, ConfigPush.
 * System queues `request:tg:config` / `response:tg:config`, push on `notify:tg:config`.
 */
import { z } from 'zod';
import { errorField } from './primitives.js';
import type { Codec } from './codec.js';
import { defineMessage, dict, list, num, optRecord, str, strMap } from './schema-kit.js';

/** Operations the config service understands. */
export type ConfigOperation =
  | 'get'
  | 'list'
  | 'getvalues'
  | 'getvalues-all-ws'
  | 'getkeys-all-ws'
  | 'put'
  | 'delete'
  | 'config';

export const ConfigKeySchema = z.object({
  type: str(),
  key: str(),
});
export type ConfigKey = z.output<typeof ConfigKeySchema>;

/**
 * `value` is a string, except that a `get` of a missing key answers with `null`: kept as `null` here (not turned
 * into `""`) so callers can tell "absent" from "empty".
 */
export const ConfigValueSchema = z.object({
  type: str(),
  key: str(),
  value: z.string().nullish().transform((v): string | null => (v === undefined ? '' : v)),
  workspace: str(),
});
export type ConfigValue = z.output<typeof ConfigValueSchema>;
export type ConfigValueInput = z.input<typeof ConfigValueSchema>;

export const ConfigRequestSchema = z.object({
  operation: str(),
  workspace: str(),
  keys: list(ConfigKeySchema),
  type: str(),
  values: list(ConfigValueSchema),
});
export type ConfigRequest = z.output<typeof ConfigRequestSchema>;
export type ConfigRequestInput = z.input<typeof ConfigRequestSchema>;

export const ConfigResponseSchema = z.object({
  version: num(),
  values: list(ConfigValueSchema),
  directory: list(z.string()),
  config: dict(strMap()),
  error: errorField(),
});
export type ConfigResponse = z.output<typeof ConfigResponseSchema>;
export type ConfigResponseInput = z.input<typeof ConfigResponseSchema>;

export const WorkspaceChangesSchema = z.object({
  created: list(z.string()),
  deleted: list(z.string()),
});
export type WorkspaceChanges = z.output<typeof WorkspaceChangesSchema>;

export const ConfigPushSchema = z.object({
  version: num(),
  /** config type → workspaces whose entries of that type changed. Empty at config-svc startup. */
  changes: dict(list(z.string())),
  workspace_changes: optRecord(WorkspaceChangesSchema),
});
export type ConfigPush = z.output<typeof ConfigPushSchema>;
export type ConfigPushInput = z.input<typeof ConfigPushSchema>;

const configRequest = defineMessage('ConfigRequest', ConfigRequestSchema);
const configResponse = defineMessage('ConfigResponse', ConfigResponseSchema);
const configPush = defineMessage('ConfigPush', ConfigPushSchema);

export const configRequestCodec = configRequest.codec;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The value entries of an answer when every one has the usual shape (an object of the four fields, each a
 * string, `null` or missing), converted as the schema converts them; undefined for anything else.
 */
export function plainValues(values: unknown): ConfigValue[] | undefined {
  if (values === null || values === undefined) return [];
  if (!Array.isArray(values)) return undefined;
  const out = new Array<ConfigValue>(values.length);
  for (let i = 0; i < values.length; i++) {
    const entry: unknown = values[i];
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return undefined;
    for (const field in entry) if (field !== 'type' && field !== 'key' && field !== 'value' && field !== 'workspace') return undefined;
    const { type, key, value, workspace } = entry as Record<string, unknown>;
    if (!isOptionalString(type) || !isOptionalString(key) || !isOptionalString(value) || !isOptionalString(workspace)) return undefined;
    out[i] = { type: type ?? '', key: key ?? '', value: value === undefined ? '' : value, workspace: workspace ?? '' };
  }
  return out;
}

const RESPONSE_FIELDS: ReadonlySet<string> = new Set(Object.keys(ConfigResponseSchema.shape));

/** Unknown fields could hide anything (the schema's path limits their nesting); they take that path. */
function onlyFields(data: object, fields: ReadonlySet<string>): boolean {
  for (const field in data) if (!fields.has(field)) return false;
  return true;
}

function isOptionalString(value: unknown): value is string | null | undefined {
  return typeof value === 'string' || value === null || value === undefined;
}

/**
 * ConfigResponse, decoded without running the schema over every value entry when they all have the usual
 * shape: a `getvalues` answer of 10 000 tools holds 10 000 of them, and checking each with zod took three times
 * as long as parsing the JSON. The other fields go through the schema. Anything unusual (or invalid) takes the
 * schema's path for all of it, so results and error messages are the schema's.
 */
export const configResponseCodec: Codec<ConfigResponse> = {
  name: configResponse.codec.name,
  encode: (value) => configResponse.codec.encode(value),
  decode(payload) {
    let data: unknown;
    try {
      data = JSON.parse(typeof payload === 'string' ? payload : utf8.decode(payload));
    } catch {
      return configResponse.codec.decode(payload);
    }
    if (typeof data === 'object' && data !== null && !Array.isArray(data) && onlyFields(data, RESPONSE_FIELDS)) {
      const values = plainValues((data as Record<string, unknown>).values);
      const rest = values && ConfigResponseSchema.safeParse({ ...data, values: null });
      if (values && rest?.success) return { ...rest.data, values };
    }
    return configResponse.codec.decode(payload);
  },
};
export const configPushCodec = configPush.codec;

export const makeConfigRequest = configRequest.make;
export const makeConfigResponse = configResponse.make;
export const makeConfigPush = configPush.make;
