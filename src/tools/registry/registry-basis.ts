import type { ArgumentSource } from '../arguments/argument-source.js';
import type { ToolServiceLookup } from '../loading/load-tool.js';
import type { ToolRegistry } from './registry-types.js';
import type { ToolAvailability, ToolIndex } from './tool-index.js';

/**
 * What a registry was built from, kept for patching it (`patchSteps`): the `tool` values, the dependencies
 * of loading, and its index. Kept beside the registry, never in it; dropped with the registry.
 */
export interface Basis {
  /** The `tool` config values, and how many keys they have. */
  readonly tools: Readonly<Record<string, unknown>>;
  readonly toolCount: number;
  readonly servicesFingerprint: string;
  readonly mcp: ArgumentSource | undefined;
  readonly lookup: ToolServiceLookup;
  /** Tool config keys with any problem (left out, a warning, a duplicate name): a change of those is built from scratch. */
  readonly problemKeys: ReadonlySet<string>;
  readonly index: ToolIndex;
  /** What every registry patched from the same build shares (the index's tables, so the same counts). */
  readonly shared: { availability?: ToolAvailability };
}

export const bases = new WeakMap<ToolRegistry, Basis>();
