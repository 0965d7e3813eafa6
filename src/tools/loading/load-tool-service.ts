/**
 * One `tool-service` config entry → a normalized, frozen `ToolServiceDescriptor`, or problems.
 */
import { decodeEntry } from '../config/config-entry.js';
import { deepFreeze } from '../freeze.js';
import { makeProblem, type Problem } from '../config/problems.js';
import { checkAgainst } from '../config/schema-issues.js';
import type { ToolServiceDescriptor } from '../tool.js';
import { ToolServiceConfigSchema } from '../config/tool-service-schema.js';

export interface ToolServiceLoad {
  readonly descriptor?: ToolServiceDescriptor;
  readonly problems: readonly Problem[];
}

export function loadToolService(workspace: string, key: string, raw: unknown): ToolServiceLoad {
  const location = { workspace, kind: 'tool-service', key } as const;
  const decoded = decodeEntry(raw);
  if (!decoded.ok) return { problems: [makeProblem(location, decoded.detail)] };
  const checked = checkAgainst(ToolServiceConfigSchema, decoded.value);
  if (!checked.ok) return { problems: checked.details.map((detail) => makeProblem(location, detail)) };
  const config = checked.data;
  const configParams = (config['config-params'] ?? []).map((param) =>
    Object.freeze(typeof param === 'string' ? { name: param, required: false } : { name: param.name, required: param.required ?? false }),
  );
  const descriptor: ToolServiceDescriptor = Object.freeze({
    key,
    requestQueue: config['request-queue'],
    responseQueue: config['response-queue'],
    configParams: Object.freeze(configParams),
    ...(config.group ? { groups: Object.freeze([...new Set(config.group)]) } : {}),
    config: deepFreeze(decoded.value),
  });
  return { descriptor, problems: [] };
}
