/**
 * The current tool registry of every workspace, rebuilt from the `tool` and `tool-service` config types
 * whenever either changes and swapped whole (design decision 5 (docs/design.md)). A workspace without tools gets an empty
 * registry: its requests are answered without tools (TrustGraph fails them with "No agent configuration").
 */
import type { Logger } from 'pino';
import type { ArgumentSource } from '../arguments/argument-source.js';
import { buildRegistry, type ToolRegistry } from './registry.js';
import { ToolLoadCache } from '../config/tool-load-cache.js';
import type { WorkspaceSnapshot } from '../../config/workspace-config.js';

export const TOOL_CONFIG_TYPES = ['tool', 'tool-service'] as const;

export class WorkspaceRegistries {
  private readonly registries = new Map<string, ToolRegistry>();
  private readonly loadCaches = new Map<string, ToolLoadCache>();

  /**
   * @param mcpArguments the `mcp-tool` argument source of a workspace (MCP discovery's snapshot, design decision 9 (docs/design.md)); absent or undefined: the
   *   registry is built without discovery
   */
  constructor(
    private readonly logger: Logger,
    private readonly onRebuilt: (registry: ToolRegistry, seconds: number) => void = () => {},
    private readonly mcpArguments?: (workspace: string) => ArgumentSource | undefined,
  ) {}

  /** Rebuild one workspace's registry from its config snapshot. Never throws. */
  rebuild(workspace: string, snapshot: WorkspaceSnapshot, version: number): ToolRegistry {
    const started = performance.now();
    const mcp = this.mcpArguments?.(workspace);
    let loadCache = this.loadCaches.get(workspace);
    if (!loadCache) this.loadCaches.set(workspace, (loadCache = new ToolLoadCache()));
    const { registry, problems } = buildRegistry({
      loadCache,
      workspace,
      tools: snapshot.tool ?? {},
      toolServices: snapshot['tool-service'] ?? {},
      version,
      ...(mcp === undefined ? {} : { mcp }),
    });
    const seconds = (performance.now() - started) / 1000;
    this.registries.set(workspace, registry);
    for (const problem of problems) {
      const log = problem.severity === 'error' ? this.logger.error.bind(this.logger) : this.logger.warn.bind(this.logger);
      log({ workspace, key: problem.key, field: problem.field }, `Tool configuration problem: ${problem.text}`);
    }
    this.logger.info(
      { workspace, version, tools: registry.tools.length, problems: problems.length, ms: Math.round(seconds * 1000) },
      'Tool registry rebuilt',
    );
    this.onRebuilt(registry, seconds);
    return registry;
  }

  get(workspace: string): ToolRegistry {
    let registry = this.registries.get(workspace);
    if (!registry) {
      registry = buildRegistry({ workspace, tools: {}, toolServices: {}, version: 0 }).registry;
      this.registries.set(workspace, registry);
    }
    return registry;
  }

  delete(workspace: string): void {
    this.registries.delete(workspace);
    this.loadCaches.delete(workspace);
  }

  all(): ToolRegistry[] {
    return [...this.registries.values()].sort((a, b) => a.workspace.localeCompare(b.workspace));
  }
}
