/**
 * A config dump as `tg-show-config` prints it ("Version: N" and a JSON object of type → key → value), or a
 * plain JSON or YAML object of that shape (values may be the JSON strings the config service holds, or objects), read as the agent reads the config service's answers: type → key → value,
 * each value a JSON string. Every key is a plain key (`__proto__` too); a dump that is not of that shape,
 * or an entry nested too deeply to handle, is refused with an error naming the type or the entry.
 */
import { parse as parseYaml } from 'yaml';
import { describeValue, errorMessage, quote } from '../errors/index.js';
import { checkJsonLimits } from '../wire/index.js';
import { ConfigDumpError } from './errors.js';
import { MAX_CONFIG_VALUE_DEPTH, MAX_CONFIG_VALUE_NODES } from './value-limits.js';
import type { TypeValues } from './workspace-config.js';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export function parseConfigDump(text: string): Record<string, TypeValues> {
  const parsed = parseText(text.replace(/^\s*Version:.*\n/, ''));
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

/**
 * JSON, or else YAML (the repository's examples are YAML). YAML's aliases are expanded within the library's
 * limit (100), so no short file expands into a huge value; a file that is neither gets both parsers' reasons.
 */
function parseText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (jsonError) {
    try {
      return parseYaml(text);
    } catch (yamlError) {
      throw new ConfigDumpError(`the dump is neither JSON (${errorMessage(jsonError)}) nor YAML (${errorMessage(yamlError).split('\n')[0]})`, { cause: yamlError });
    }
  }
}

/** The entry's value as the config service holds it: a string as it is, anything else as JSON (within the agent's limits). */
function valueText(type: string, key: string, value: unknown): string {
  if (typeof value === 'string') return value;
  const overLimit = checkJsonLimits(value, { maxDepth: MAX_CONFIG_VALUE_DEPTH, maxNodes: MAX_CONFIG_VALUE_NODES });
  if (overLimit !== undefined) throw new ConfigDumpError(`entry ${quote(type)} / ${quote(key)} of the dump has ${overLimit}: more than the agent takes in one config value`);
  return JSON.stringify(value);
}
