/**
 * Group hierarchies (the tool-group spec's §11.2), opt-in per workspace (`"group-hierarchy": true` in its group
 * policy): dotted names form a tree, and a group stands for itself and everything below it. A request for
 * `knowledge` may use the tools of `knowledge`, `knowledge.read` and `knowledge.read.deep`; a request for
 * `knowledge.read` those of `knowledge.read` and below, never `knowledge.write` nor a tool only in `knowledge`.
 * The policy reads the same way: allowing `knowledge` allows asking for any group below it, allowing only
 * `knowledge.read` refuses a request for `knowledge` (it would reach `knowledge.write`).
 *
 * Why expand the request rather than the tools: the tools' groups stay exactly as configured (the listing, the
 * audit's filtered-by-group and the metrics keep their meaning), one expansion per request reaches every
 * pattern through its `AgentAsk`, and a workspace without the flag is untouched: there a dot is only a character.
 */
import type { RequestedGroups } from './selection.js';

/** True when `group` is `ancestor` or below it. */
export function isWithin(group: string, ancestor: string): boolean {
  return group === ancestor || (group.length > ancestor.length && group.startsWith(ancestor) && group[ancestor.length] === '.');
}

/**
 * `requested` with every known group below a requested one added (sorted, deduplicated); the wildcard and a
 * request whose groups have nothing below them are returned as they are.
 */
export function expandGroupHierarchy(requested: RequestedGroups, knownGroups: Iterable<string>): RequestedGroups {
  if (requested.wildcard) return requested;
  const groups = new Set(requested.groups);
  for (const known of knownGroups) {
    if (!groups.has(known) && requested.groups.some((group) => isWithin(known, group))) groups.add(known);
  }
  if (groups.size === requested.groups.length) return requested;
  return { groups: [...groups].sort(), wildcard: false };
}

/** The groups `group` is below (each `isWithin(group, ancestor)`), nearest first: `a.b.c` → `a.b`, `a`. */
export function ancestorsOf(group: string): string[] {
  const out: string[] = [];
  for (let dot = group.lastIndexOf('.'); dot >= 0; dot = dot > 0 ? group.lastIndexOf('.', dot - 1) : -1) out.push(group.slice(0, dot));
  return out;
}
