/**
 * `trustgraph-base/trustgraph/schema/config.py` (TrustGraph 2.11.1, unchanged since 2.8): ConfigRequest, ConfigResponse, ConfigPush.
 * System queues `request:tg:config` / `response:tg:config`, push on `notify:tg:config`.
 */
import { z } from 'zod';
import { errorField } from './primitives.js';
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
export const configResponseCodec = configResponse.codec;
export const configPushCodec = configPush.codec;

export const makeConfigRequest = configRequest.make;
export const makeConfigResponse = configResponse.make;
export const makeConfigPush = configPush.make;
