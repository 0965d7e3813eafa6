/**
 * The tool registry of one workspace (TG-8 (docs/requirements.md), design decisions 4–5 (docs/design.md)): built from the workspace's `tool`
 * and `tool-service` config, immutable, versioned, replaced as a whole on every change. Building never
 * throws; invalid entries are left out and reported as `problems`.
 */
import type { ArgumentsReport } from '../arguments/argument-source.js';
import { quote } from '../../errors/index.js';
import { deepFreeze, frozenMap, frozenSet } from '../freeze.js';
import { loadTool, type ToolServiceLookup } from '../loading/load-tool.js';
import { mcpGroupsOf } from '../config/mcp-groups.js';
import { loadToolService } from '../loading/load-tool-service.js';
import { makeProblem, type ConfigKind, type Problem } from '../config/problems.js';
import { DEFAULT_GROUP, DEFAULT_STATE } from '../../groups/index.js';
import type { Tool, ToolServiceDescriptor } from '../tool.js';
import { ToolIndex } from './tool-index.js';
import { CHEAP_ITEMS_PER_STEP, runInSlices, runToEnd, type Steps } from '../../threads/index.js';
import { entriesOf } from './config-entries.js';
import { bases, type Basis } from './registry-basis.js';
import { assembleRegistry } from './registry-object.js';
import { patchSteps } from './registry-patch.js';
import type { BuildRegistryInput, BuildRegistryResult } from './registry-types.js';

export { DEFAULT_TOOL_SET_CACHE_SIZE } from './registry-object.js';
export { compareConfigKeys } from './config-entries.js';
export type { BuildRegistryInput, BuildRegistryResult, FilterOptions, ToolRegistry, ToolSetCacheStats } from './registry-types.js';

/** What tool loading depends on besides the tool's own value: the tool-service descriptors. */
function servicesFingerprint(values: unknown): string {
  if (values === null || values === undefined || typeof values !== 'object') return String(values);
  try {
    return JSON.stringify(Object.entries(values as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  } catch {
    // Not serialisable (e.g. nested too deep to stringify): a fingerprint nothing matches, so nothing is reused.
    return `unmatched:${Math.random()}`;
  }
}

/** A failure nobody foresaw while loading one entry: that entry is left out, the others still load. */
function unexpectedProblem(workspace: string, kind: ConfigKind, key: string, error: unknown): Problem {
  const reason = error instanceof RangeError ? 'value too large or too deeply nested to process' : String(error);
  return makeProblem({ workspace, kind, key }, { message: `could not be loaded (${reason.slice(0, 200)}); left out` });
}

/** `problems` frozen, each problem whole, yielding between them (thousands of bad entries are thousands of problems). */
function* deepFreezeSteps(problems: Problem[]): Steps<readonly Problem[]> {
  for (let i = 0; i < problems.length; i++) {
    deepFreeze(problems[i]);
    if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
  }
  return Object.freeze(problems);
}

/** Build a workspace's registry now, in one go. Never throws on bad configuration. */
export function buildRegistry(input: BuildRegistryInput): BuildRegistryResult {
  return runToEnd(registrySteps(input));
}

/**
 * Build a workspace's registry in time slices (see time-slices.ts), the event loop free between them: what a
 * reload of thousands of tools uses. The result is the same as `buildRegistry`'s; until the promise resolves,
 * nothing of the new registry is visible, so requests meanwhile see the previous one, whole. Never rejects on
 * bad configuration.
 */
export function buildRegistryInSlices(input: BuildRegistryInput, sliceMs?: number): Promise<BuildRegistryResult> {
  return runInSlices(registrySteps(input), sliceMs);
}

/** The build, as steps: the previous registry patched when it can be, otherwise from scratch. */
function* registrySteps(input: BuildRegistryInput): Steps<BuildRegistryResult> {
  // Tools inherit groups from their tool-service and mcp entries: a change of either rebuilds every tool.
  const fingerprint = `${servicesFingerprint(input.toolServices)}|${servicesFingerprint(input.mcpServers ?? {})}`;
  if (input.previous !== undefined) {
    const patched = yield* patchSteps(input, input.previous, fingerprint);
    if (patched !== undefined) return patched;
    yield;
  }
  return yield* fullSteps(input, fingerprint);
}

/** The `tool-service` entries loaded: the descriptors by key, and the keys that are invalid. */
function* servicesSteps(workspace: string, values: unknown, problems: Problem[]): Steps<{ services: Map<string, ToolServiceDescriptor>; invalid: Set<string> }> {
  const services = new Map<string, ToolServiceDescriptor>();
  const invalid = new Set<string>();
  for (const [key, raw] of yield* entriesOf(workspace, 'tool-service', values, problems)) {
    let loaded: ReturnType<typeof loadToolService>;
    try {
      loaded = loadToolService(workspace, key, raw);
    } catch (error) {
      loaded = { problems: [unexpectedProblem(workspace, 'tool-service', key, error)] };
    }
    problems.push(...loaded.problems);
    if (loaded.descriptor) services.set(key, loaded.descriptor);
    else invalid.add(key);
    yield;
  }
  return { services, invalid };
}

/** The `tool` entries loaded in config-key order (from the load cache where unchanged), with their MCP argument reports. */
function* toolsSteps(
  input: BuildRegistryInput,
  lookup: ToolServiceLookup,
  fingerprint: string,
  problems: Problem[],
): Steps<{ loaded: Tool[]; mcpReports: Map<Tool, ArgumentsReport>; entryCount: number }> {
  const workspace = String(input.workspace);
  const loadedTools: Tool[] = [];
  const mcpReports = new Map<Tool, ArgumentsReport>();
  const session = input.loadCache?.begin(fingerprint, input.mcp);
  const toolEntries = yield* entriesOf(workspace, 'tool', input.tools, problems);
  yield;
  for (const [key, raw] of toolEntries) {
    let loaded = session?.get(key, raw);
    if (!loaded) {
      try {
        loaded = loadTool(workspace, key, raw, lookup, input.mcp);
      } catch (error) {
        loaded = { problems: [unexpectedProblem(workspace, 'tool', key, error)] };
      }
      session?.set(key, raw, loaded);
    }
    problems.push(...loaded.problems);
    if (loaded.tool) {
      loadedTools.push(loaded.tool);
      if (loaded.mcp) mcpReports.set(loaded.tool, loaded.mcp);
    }
    yield;
  }
  session?.end();
  return { loaded: loadedTools, mcpReports, entryCount: toolEntries.length };
}

/**
 * The tools whose name no greater config key also has (TrustGraph's later key overwrites the earlier), each
 * loser a problem, and the kept tools' MCP reports by name. Every pass yields every CHEAP_ITEMS_PER_STEP tools:
 * 10 000 map inserts are milliseconds.
 */
function* uniqueNamesSteps(
  workspace: string,
  loadedTools: readonly Tool[],
  mcpReports: ReadonlyMap<Tool, ArgumentsReport>,
  problems: Problem[],
): Steps<{ kept: Tool[]; mcp: [string, ArgumentsReport][] }> {
  const winners = new Map<string, Tool>();
  for (let i = 0; i < loadedTools.length; i++) {
    winners.set(loadedTools[i]!.name, loadedTools[i]!);
    if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
  }
  yield;
  const kept: Tool[] = [];
  const mcp: [string, ArgumentsReport][] = [];
  for (let i = 0; i < loadedTools.length; i++) {
    const tool = loadedTools[i]!;
    if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
    const winner = winners.get(tool.name)!;
    if (winner === tool) {
      kept.push(tool);
      const report = mcpReports.get(tool);
      if (report !== undefined) mcp.push([tool.name, report]);
      continue;
    }
    problems.push(
      makeProblem(
        { workspace, kind: 'tool', key: tool.key, name: tool.name },
        {
          field: 'name',
          message:
            `duplicate tool name ${quote(tool.name)}: config key ${quote(winner.key)} defines it too and wins ` +
            `(the greatest config key wins); this entry is left out`,
        },
      ),
    );
  }
  return { kept, mcp };
}

/** The build from scratch, as steps: yields between entries and between passes. */
function* fullSteps(input: BuildRegistryInput, fingerprint: string): Steps<BuildRegistryResult> {
  const workspace = String(input.workspace);
  const version = input.version;
  const problems: Problem[] = [];

  const { services, invalid: invalidServices } = yield* servicesSteps(workspace, input.toolServices, problems);
  yield;
  const lookup: ToolServiceLookup = { services, invalid: invalidServices, mcpGroups: mcpGroupsOf(input.mcpServers) };
  const problemsBeforeTools = problems.length;
  const { loaded, mcpReports, entryCount } = yield* toolsSteps(input, lookup, fingerprint, problems);
  const { kept, mcp } = yield* uniqueNamesSteps(workspace, loaded, mcpReports, problems);

  const tools = Object.freeze(kept);
  yield;
  const index = yield* ToolIndex.build(tools, CHEAP_ITEMS_PER_STEP);
  const mcpByName = frozenMap(mcp);
  yield;
  const frozenProblems = yield* deepFreezeSteps(problems);
  const shared: Basis['shared'] = {};
  const problemKeys = new Set<string>();
  for (let i = problemsBeforeTools; i < problems.length; i++) if (problems[i]!.kind === 'tool') problemKeys.add(problems[i]!.key);
  yield;

  const registry = assembleRegistry({
    workspace,
    version,
    tools,
    toolServices: frozenMap(services),
    problems: frozenProblems,
    knownGroups: frozenSet([DEFAULT_GROUP, ...index.groups]),
    knownStates: frozenSet([DEFAULT_STATE, ...index.states]),
    mcp: mcpByName,
    index,
    shared,
    cacheSize: input.cacheSize,
  });
  const values = input.tools;
  if (values !== null && values !== undefined && typeof values === 'object' && !Array.isArray(values)) {
    bases.set(registry, {
      tools: values,
      toolCount: entryCount,
      servicesFingerprint: fingerprint,
      mcp: input.mcp,
      lookup,
      problemKeys,
      index,
      shared,
    });
  }
  return { registry, problems: frozenProblems };
}

