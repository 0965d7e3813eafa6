/**
 * A config dump as `tg-show-config` prints it ("Version: N" and a JSON object of type → key → value), or a
 * plain JSON object of that shape, read as the agent reads the config service's answers: type → key → value,
 * each value a JSON string. Every key is a plain key (`__proto__` too); a dump that is not of that shape,
 * or an entry nested too deeply to handle, is refused with an error naming the type or the entry.
 */
import { errorMessage } from '../errors/error-text.js';
import { MAX_CONFIG_VALUE_DEPTH, MAX_CONFIG_VALUE_NODES } from '../tools/config/config-entry.js';
import { describeValue, quote } from '../tools/describe-value.js';
import { checkJsonLimits } from '../wire/json-limits.js';
import { ConfigDumpError } from './errors.js';
import type { TypeValues } from './workspace-config.js';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export function parseConfigDump(text: string): Record<string, TypeValues> {
  const json = text.replace(/^\s*Version:.*\n/, '');
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    throw new ConfigDumpError(`the dump is not JSON: ${errorMessage(error)}`, { cause: error });
  }
  if (!isObject(parsed)) throw new ConfigDumpError(`the dump is not a JSON object of config types, got ${describeValue(parsed)}`);
  const out = Object.create(null) as Record<string, TypeValues>;
  for (const [type, entries] of Object.entries(parsed)) {
    if (!isObject(entries)) throw new ConfigDumpError(`config type ${quote(type)} of the dump must map keys to values, got ${describeValue(entries)}`);
    const values = Object.create(null) as Record<string, string>;
    for (const [key, value] of Object.entries(entries)) values[key] = valueText(type, key, value);
    out[type] = values;
  }
  return out;
}

/** The entry's value as the config service holds it: a string as it is, anything else as JSON (within the agent's limits). */
function valueText(type: string, key: string, value: unknown): string {
  if (typeof value === 'string') return value;
  const overLimit = checkJsonLimits(value, { maxDepth: MAX_CONFIG_VALUE_DEPTH, maxNodes: MAX_CONFIG_VALUE_NODES });
  if (overLimit !== undefined) throw new ConfigDumpError(`entry ${quote(type)} / ${quote(key)} of the dump has ${overLimit}: more than the agent takes in one config value`);
  return JSON.stringify(value);
}
