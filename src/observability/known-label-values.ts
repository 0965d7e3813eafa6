/**
 * The group, state and tool names configuration gives, as metric label values: how many workspaces' registries
 * name each, so a name stays a label value while any workspace has it, and the series naming one that is gone
 * can be removed.
 */
import type { Metric } from 'prom-client';
import type { ToolRegistry } from '../tools/index.js';

export type LabelKind = 'groups' | 'states' | 'tools';

export interface LabelChanges {
  /** Names configured now that were not before. */
  readonly added: Record<LabelKind, string[]>;
  /** Names no workspace configures any more. */
  readonly removed: Record<LabelKind, Set<string>>;
}

export class KnownLabelValues {
  private readonly counts: Record<LabelKind, Map<string, number>> = { groups: new Map(), states: new Map(), tools: new Map() };

  has(kind: LabelKind, name: string): boolean {
    return this.counts[kind].has(name);
  }

  /**
   * Count `next`'s group, state and tool names in and `previous`'s out (the registry it replaces, or a deleted
   * workspace's): work in proportion to the two registries, not to every workspace.
   */
  replace(previous: ToolRegistry | undefined, next: ToolRegistry | undefined): LabelChanges {
    const { groups, states, tools } = this.counts;
    if (groups.size === 0) groups.set('default', 1);
    if (states.size === 0) states.set('undefined', 1);
    const added: Record<LabelKind, string[]> = { groups: [], states: [], tools: [] };
    const removed: Record<LabelKind, Set<string>> = { groups: new Set(), states: new Set(), tools: new Set() };
    // Counted in before out, so a name in both never reaches 0.
    if (next !== undefined) {
      for (const group of next.knownGroups) if (count(groups, group, 1) === 1) added.groups.push(group);
      for (const state of next.knownStates) if (count(states, state, 1) === 1) added.states.push(state);
      for (const tool of next.tools) if (count(tools, tool.name, 1) === 1) added.tools.push(tool.name);
    }
    if (previous !== undefined) {
      for (const group of previous.knownGroups) if (count(groups, group, -1) === 0) removed.groups.add(group);
      for (const state of previous.knownStates) if (count(states, state, -1) === 0) removed.states.add(state);
      for (const tool of previous.tools) if (count(tools, tool.name, -1) === 0) removed.tools.add(tool.name);
    }
    return { added, removed };
  }
}

/** Add `by` to the count of `name` (gone at 0); returns the new count. */
function count(counts: Map<string, number>, name: string, by: number): number {
  const n = (counts.get(name) ?? 0) + by;
  if (n <= 0) counts.delete(name);
  else counts.set(name, n);
  return n;
}

/** Remove every series of `metric` whose `label` is one of `values` (histogram buckets collapse to one series). */
export async function removeSeries(metric: Metric, label: string, values: ReadonlySet<string>): Promise<void> {
  if (values.size === 0) return;
  const { values: samples } = await metric.get();
  const seen = new Set<string>();
  for (const sample of samples) {
    const labels = { ...sample.labels } as Record<string, string | number>;
    if (!values.has(String(labels[label]))) continue;
    delete labels.le;
    const key = JSON.stringify(Object.entries(labels).sort());
    if (seen.has(key)) continue;
    seen.add(key);
    (metric as unknown as { remove(labels: Record<string, string | number>): void }).remove(labels);
  }
}
