/** A registry patched in place of a rebuild when a reload changed only tool values that index the same way. */
import type { ArgumentsReport } from '../arguments/argument-source.js';
import { frozenMap } from '../freeze.js';
import { loadTool, type ToolLoad } from '../loading/load-tool.js';
import type { Tool } from '../tool.js';
import { CHEAP_ITEMS_PER_STEP, type Steps } from '../../threads/index.js';
import { compareConfigKeys } from './config-entries.js';
import type { BuildRegistryInput, BuildRegistryResult, ToolRegistry } from './registry-types.js';
import { bases } from './registry-basis.js';
import { assembleRegistry } from './registry-object.js';

/** Whether the index places `after` exactly where it placed `before`: same name, groups, states and `state` target. */
function sameIndexing(before: Tool, after: Tool): boolean {
  if (before.name !== after.name || before.nextState !== after.nextState) return false;
  const [a, b] = [before.groups, after.groups];
  if (a.length !== b.length || a.some((group, i) => group !== b[i])) return false;
  const [x, y] = [before.states, after.states];
  if (x === 'all' || y === 'all') return x === y;
  if (x.size !== y.size) return false;
  for (const state of x) if (!y.has(state)) return false;
  return true;
}

/** Position of the tool of config key `key` in `tools` (ascending config-key order), or -1. */
function positionOfKey(tools: readonly Tool[], key: string): number {
  let low = 0;
  let high = tools.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const order = compareConfigKeys(tools[middle]!.key, key);
    if (order === 0) return middle;
    if (order < 0) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}

/**
 * `previous` with the changed tool values of `input` loaded in place, or undefined when it cannot be patched
 * (then the caller builds from scratch; what was loaded here is in the load cache). A reload that changed one
 * of 10 000 tools then loads one tool and copies two arrays, instead of rebuilding (and leaving for the
 * garbage collector) every table of the index. `previous` itself is not touched.
 */
export function* patchSteps(input: BuildRegistryInput, previous: ToolRegistry, fingerprint: string): Steps<BuildRegistryResult | undefined> {
  const basis = bases.get(previous);
  const workspace = String(input.workspace);
  const values = input.tools;
  if (basis === undefined || previous.workspace !== workspace) return undefined;
  if (values === null || values === undefined || typeof values !== 'object' || Array.isArray(values)) return undefined;
  if (basis.servicesFingerprint !== fingerprint || basis.mcp !== input.mcp) return undefined;

  // Unchanged values are usually the very strings of the previous answer (values-delta.ts): comparing them is a pointer check.
  const before = basis.tools;
  const changed: string[] = [];
  let count = 0;
  for (const key in values) {
    if (!Object.hasOwn(values, key)) continue;
    if (!Object.hasOwn(before, key)) return undefined;
    if (before[key] !== values[key]) changed.push(key);
    if (++count % CHEAP_ITEMS_PER_STEP === 0) yield;
  }
  if (count !== basis.toolCount) return undefined;
  yield;

  const replaced: [number, Tool, ArgumentsReport | undefined][] = [];
  let mcpChanged = false;
  for (const key of changed) {
    const at = positionOfKey(previous.tools, key);
    if (at < 0 || basis.problemKeys.has(key)) return undefined;
    const raw = values[key];
    let loaded: ToolLoad;
    try {
      loaded = loadTool(workspace, key, raw, basis.lookup, input.mcp);
    } catch {
      // The build from scratch reports it.
      return undefined;
    }
    input.loadCache?.update(key, raw, loaded);
    const old = previous.tools[at]!;
    if (loaded.tool === undefined || loaded.problems.length > 0 || !sameIndexing(old, loaded.tool)) return undefined;
    if (loaded.mcp !== undefined || previous.mcp.has(old.name)) mcpChanged = true;
    replaced.push([at, loaded.tool, loaded.mcp]);
    yield;
  }

  const list = previous.tools.slice();
  for (const [at, tool] of replaced) list[at] = tool;
  const tools = Object.freeze(list);
  yield;
  let mcp = previous.mcp;
  if (mcpChanged) {
    const reports = new Map(previous.mcp);
    for (const [, tool, report] of replaced) {
      if (report === undefined) reports.delete(tool.name);
      else reports.set(tool.name, report);
    }
    mcp = frozenMap(reports);
  }
  const index = basis.index.withTools(tools);
  const registry = assembleRegistry({
    workspace,
    version: input.version,
    tools,
    toolServices: previous.toolServices,
    problems: previous.problems,
    knownGroups: previous.knownGroups,
    knownStates: previous.knownStates,
    mcp,
    index,
    shared: basis.shared,
    cacheSize: input.cacheSize,
  });
  bases.set(registry, { ...basis, tools: values, toolCount: count, index });
  return { registry, problems: registry.problems };
}
