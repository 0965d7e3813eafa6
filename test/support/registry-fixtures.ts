/** Helpers for the tool registry tests: config values are JSON strings, as the config service holds them. */
import { buildRegistry, type BuildRegistryResult } from '../../src/tools/registry/registry.js';

export const json = (value: unknown): string => JSON.stringify(value);

/** Build a registry for workspace "default" from objects (encoded here) or raw strings (used as-is). */
export function registryOf(
  tools: Record<string, unknown>,
  toolServices: Record<string, unknown> = {},
  options: { version?: number; cacheSize?: number } = {},
): BuildRegistryResult {
  const encode = (values: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(values).map(([key, value]) => [key, typeof value === 'string' ? value : json(value)]));
  return buildRegistry({
    workspace: 'default',
    version: options.version ?? 1,
    tools: encode(tools),
    toolServices: encode(toolServices),
    ...(options.cacheSize === undefined ? {} : { cacheSize: options.cacheSize }),
  });
}

/** A minimal valid text-completion tool with the given extra keys. */
export const textTool = (name: string, extra: Record<string, unknown> = {}) => ({ type: 'text-completion', name, ...extra });
