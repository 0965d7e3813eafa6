/**
 * The current tool registry of every workspace, rebuilt from the `tool` and `tool-service` config types
 * whenever either changes and swapped whole (design decision 5 (docs/design.md)). A workspace without tools gets an empty
 * registry: its requests are answered without tools (TrustGraph fails them with "No agent configuration").
 *
 * A rebuild runs in time slices (`buildRegistryInSlices`): with 10 000 tools it takes tens to hundreds of
 * milliseconds, and requests keep being served meanwhile, by the previous registry, until the new one is
 * complete and replaces it in one assignment. Rebuilds of one workspace run one after another, in the order
 * they were asked for, so the newest configuration is the one that ends up in place.
 */
import type { Logger } from 'pino';
import type { ArgumentSource } from '../arguments/argument-source.js';
import { buildRegistry, buildRegistryInSlices, type ToolRegistry } from './registry.js';
import { nextMacrotask, runInSlices } from '../../threads/index.js';
import { ToolLoadCache } from '../loading/tool-load-cache.js';
import type { WorkspaceSnapshot } from '../../config/index.js';

export const TOOL_CONFIG_TYPES = ['tool', 'tool-service', 'mcp'] as const;

/** The rebuilds of one workspace: the newest asked for, and the end of the chain they run in. */
interface Rebuilds {
  version: number;
  chain: Promise<unknown>;
  readonly loadCache: ToolLoadCache;
}

export class WorkspaceRegistries {
  private readonly registries = new Map<string, ToolRegistry>();
  private readonly rebuilds = new Map<string, Rebuilds>();

  /**
   * @param mcpArguments the `mcp-tool` argument source of a workspace (MCP discovery's snapshot, design decision 9 (docs/design.md)); absent or undefined: the
   *   registry is built without discovery
   */
  constructor(
    private readonly logger: Logger,
    private readonly onRebuilt: (registry: ToolRegistry, seconds: number) => void = () => {},
    private readonly mcpArguments?: (workspace: string) => ArgumentSource | undefined,
  ) {}

  /**
   * Rebuild one workspace's registry from its config snapshot, after any rebuild of it already under way.
   * Resolves with the registry once it is in place (or, if the workspace was deleted meanwhile, without
   * putting it in place). Never rejects.
   */
  rebuild(workspace: string, snapshot: WorkspaceSnapshot, version: number): Promise<ToolRegistry> {
    let rebuilds = this.rebuilds.get(workspace);
    if (!rebuilds) this.rebuilds.set(workspace, (rebuilds = { version, chain: Promise.resolve(), loadCache: new ToolLoadCache() }));
    rebuilds.version = version;
    const own = rebuilds;
    const done = own.chain.then(() => this.build(workspace, snapshot, version, own));
    own.chain = done.catch(() => {});
    return done;
  }

  /** The config version of the newest rebuild asked for (under way or done), if any. */
  latestVersion(workspace: string): number | undefined {
    return this.rebuilds.get(workspace)?.version;
  }

  private async build(workspace: string, snapshot: WorkspaceSnapshot, version: number, rebuilds: Rebuilds): Promise<ToolRegistry> {
    const started = performance.now();
    const mcp = this.mcpArguments?.(workspace);
    const { registry, problems } = await buildRegistryInSlices({
      loadCache: rebuilds.loadCache,
      workspace,
      tools: snapshot.tool ?? {},
      toolServices: snapshot['tool-service'] ?? {},
      mcpServers: snapshot.mcp ?? {},
      version,
      ...(mcp === undefined ? {} : { mcp }),
      // Patched when only tool values changed (see BuildRegistryInput.previous).
      previous: this.registries.get(workspace),
    });
    // The swap and the metrics hook (label sets of every tool name) in a macrotask of their own, not on top of the build's last slice.
    await nextMacrotask();
    // Deleted while it was being built: the workspace stays gone.
    if (this.rebuilds.get(workspace) !== rebuilds) return registry;
    const seconds = (performance.now() - started) / 1000;
    this.registries.set(workspace, registry);
    this.onRebuilt(registry, seconds);
    // Thousands of bad entries are thousands of log lines: written in slices too.
    await runInSlices(this.logProblems(workspace, problems));
    this.logger.info(
      { workspace, version, tools: registry.tools.length, problems: problems.length, ms: Math.round(seconds * 1000) },
      'Tool registry rebuilt',
    );
    return registry;
  }

  private *logProblems(workspace: string, problems: ToolRegistry['problems']): Generator<void, void, void> {
    for (const problem of problems) {
      const log = problem.severity === 'error' ? this.logger.error.bind(this.logger) : this.logger.warn.bind(this.logger);
      log({ workspace, key: problem.key, field: problem.field }, `Tool configuration problem: ${problem.text}`);
      yield;
    }
  }

  get(workspace: string): ToolRegistry {
    let registry = this.registries.get(workspace);
    if (!registry) {
      registry = buildRegistry({ workspace, tools: {}, toolServices: {}, version: 0 }).registry;
      this.registries.set(workspace, registry);
    }
    return registry;
  }

  /** Forget the workspace; a rebuild of it under way finishes without putting its registry in place. */
  delete(workspace: string): void {
    this.registries.delete(workspace);
    this.rebuilds.delete(workspace);
  }

  all(): ToolRegistry[] {
    return [...this.registries.values()].sort((a, b) => a.workspace.localeCompare(b.workspace));
  }
}
