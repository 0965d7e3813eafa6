/**
 * Loaded tools from the previous build of a workspace's registry, reused when neither their config value nor
 * what loading depends on (the `tool-service` descriptors, MCP discovery's snapshot) changed. A config push
 * fetches every tool of the workspace, but usually changes one: with the cache, a rebuild of 10 000 tools
 * loads only the changed ones instead of parsing and validating all of them again (bench/reload.ts).
 *
 * Loaded tools are frozen, so sharing them between registries is safe.
 */
import type { ArgumentSource } from '../arguments/argument-source.js';
import type { ToolLoad } from './load-tool.js';

interface Entry {
  readonly raw: string;
  readonly load: ToolLoad;
}

export class ToolLoadCache {
  private entries = new Map<string, Entry>();
  private dependencies: { services: string; mcp: ArgumentSource | undefined } | undefined;

  /** The load of one entry under the dependencies of the last build (a registry patched in place of a build). */
  update(key: string, raw: unknown, load: ToolLoad): void {
    if (typeof raw === 'string') this.entries.set(key, { raw, load });
  }

  /**
   * Start a build. When the dependencies differ from the previous build's, nothing is reused.
   * @param services a fingerprint of the workspace's `tool-service` values
   */
  begin(services: string, mcp: ArgumentSource | undefined): BuildSession {
    const same = this.dependencies !== undefined && this.dependencies.services === services && this.dependencies.mcp === mcp;
    const previous = same ? this.entries : new Map<string, Entry>();
    const next = new Map<string, Entry>();
    let reused = 0;
    return {
      get: (key, raw) => {
        if (typeof raw !== 'string') return undefined;
        const entry = previous.get(key);
        if (entry?.raw !== raw) return undefined;
        reused++;
        next.set(key, entry);
        return entry.load;
      },
      set: (key, raw, load) => {
        if (typeof raw === 'string') next.set(key, { raw, load });
      },
      end: () => {
        this.entries = next;
        this.dependencies = { services, mcp };
        return reused;
      },
    };
  }
}

export interface BuildSession {
  /** The previous load of this entry, if its value and the build's dependencies are unchanged. */
  get(key: string, raw: unknown): ToolLoad | undefined;
  set(key: string, raw: unknown, load: ToolLoad): void;
  /** Keep this build's entries (only the current keys) for the next build; returns how many were reused. */
  end(): number;
}
