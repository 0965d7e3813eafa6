/**
 * What a new tool configuration would change for conversations that already happened: each recorded iteration
 * (an audit line: the request's groups, the state it was in, the tools it was offered and used) is replayed
 * through the new registry and group policy, as the agent would select its tools, and compared with what it
 * was offered then. Counted per tool (iterations that would no longer be offered it, and of those how many
 * used it), per requested group, and per state that would become a dead end: recorded iterations there were
 * offered tools, the new configuration offers them none.
 */
import { checkGroups, DEFAULT_GROUP, effectiveGroups, type GroupPolicy, normalizeRequestGroups, WILDCARD } from '../groups/index.js';
import type { ToolRegistry } from '../tools/index.js';

/** The part of an audit line (observability/audit.ts) the replay reads. */
export interface RecordedIteration {
  readonly workspace: string;
  /** The request id (the session id when there is none): one conversation. */
  readonly conversation: string;
  /** As the request sent them; null: the default group. */
  readonly requestedGroups: readonly string[] | null;
  readonly state: string;
  readonly offered: readonly string[];
  /** The tool the model chose and every tool run in the iteration. */
  readonly used: readonly string[];
  readonly startedAt: Date;
}

const isStrings = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === 'string');

/** The iteration an audit record describes, or undefined for any other line (or an iteration that never ran). */
export function recordedIteration(line: unknown): RecordedIteration | undefined {
  if (typeof line !== 'object' || line === null) return undefined;
  const r = line as Record<string, unknown>;
  if (r.audit !== 'agent-iteration' || typeof r.workspace !== 'string' || typeof r.initial_state !== 'string' || !isStrings(r.offered_tools)) return undefined;
  if (typeof r.iteration !== 'number' || r.iteration < 1) return undefined;
  const groups = r.requested_groups === null ? null : isStrings(r.requested_groups) ? r.requested_groups : undefined;
  if (groups === undefined) return undefined;
  const used = new Set<string>();
  if (typeof r.action === 'string') used.add(r.action);
  if (Array.isArray(r.tools_used)) for (const u of r.tools_used as { tool?: unknown }[]) if (typeof u?.tool === 'string') used.add(u.tool);
  // The request id stays the same through a conversation's iterations (the session id is set from the second on).
  const session = typeof r.request_id === 'string' && r.request_id !== '' ? r.request_id : String(r.session_id);
  return {
    workspace: r.workspace,
    conversation: session,
    requestedGroups: groups,
    state: r.initial_state,
    offered: r.offered_tools,
    used: [...used],
    startedAt: new Date(typeof r.started_at === 'string' ? r.started_at : 0),
  };
}

export interface Loss {
  /** Recorded iterations offered it (a tool), or with it (a group). */
  readonly iterations: number;
  /** Of those, how many the new configuration would not offer it (a tool's), or would not offer a tool they were offered (a group's). */
  readonly losing: number;
  /** Of those, how many used the tool (or a tool) taken away. */
  readonly losingUsed: number;
}

export interface ToolImpact extends Loss {
  readonly tool: string;
  /** The same, among the iterations whose request named each group (the default group for none). */
  readonly byGroup: readonly ({ readonly group: string } & Loss)[];
}

export interface DeadEnd {
  readonly state: string;
  /** Conversations, and iterations, recorded in that state with tools offered, to which the new configuration offers none. */
  readonly conversations: number;
  readonly iterations: number;
  /** The requested groups of those iterations. */
  readonly groups: readonly string[];
}

export interface ConfigImpact {
  readonly workspace: string;
  readonly iterations: number;
  readonly conversations: number;
  /** Tools some recorded iteration was offered, those that lose most first. */
  readonly tools: readonly ToolImpact[];
  /** Requested groups of the recorded iterations, those that lose most first. */
  readonly groups: readonly ({ readonly group: string } & Loss)[];
  readonly deadEnds: readonly DeadEnd[];
}

interface Counter {
  iterations: number;
  losing: number;
  losingUsed: number;
}
const counter = (): Counter => ({ iterations: 0, losing: 0, losingUsed: 0 });
const counterOf = <K>(map: Map<K, Counter>, key: K): Counter => {
  let found = map.get(key);
  if (found === undefined) map.set(key, (found = counter()));
  return found;
};

/** The tools the new configuration offers a request with these groups in this state, at that time (availability windows). */
function offeredNow(registry: ToolRegistry, policy: GroupPolicy | undefined, requested: readonly string[] | null, state: string, at: Date): ReadonlySet<string> {
  const groups = normalizeRequestGroups(requested);
  if (!checkGroups(policy, groups).allowed) return new Set();
  const effective = effectiveGroups(policy, groups, registry.knownGroups, { now: at });
  const offered = new Set(registry.offer({ groups: { groups: effective.groups, wildcard: effective.wildcard }, state }).names);
  for (const withdrawal of effective.withdrawnTools ?? []) offered.delete(withdrawal.tool);
  return offered;
}

/** Replay the workspace's recorded iterations through `registry` and `policy` (the new configuration). */
export function configImpact(records: Iterable<RecordedIteration>, registry: ToolRegistry, policy: GroupPolicy | undefined): ConfigImpact {
  const tools = new Map<string, { total: Counter; byGroup: Map<string, Counter> }>();
  const groups = new Map<string, Counter>();
  const deadEnds = new Map<string, { conversations: Set<string>; iterations: number; groups: Set<string> }>();
  const conversations = new Set<string>();
  let iterations = 0;
  for (const record of records) {
    if (record.workspace !== registry.workspace) continue;
    iterations++;
    conversations.add(record.conversation);
    const now = offeredNow(registry, policy, record.requestedGroups, record.state, record.startedAt);
    const asked = groupLabels(record.requestedGroups);
    const lost = record.offered.filter((tool) => !now.has(tool));
    const lostUsed = lost.some((tool) => record.used.includes(tool));
    for (const group of asked) count(counterOf(groups, group), lost.length > 0, lostUsed);
    for (const tool of new Set(record.offered)) {
      const entry = tools.get(tool) ?? { total: counter(), byGroup: new Map<string, Counter>() };
      tools.set(tool, entry);
      const gone = !now.has(tool);
      const goneUsed = gone && record.used.includes(tool);
      count(entry.total, gone, goneUsed);
      for (const group of asked) count(counterOf(entry.byGroup, group), gone, goneUsed);
    }
    if (record.offered.length > 0 && now.size === 0) {
      const dead = deadEnds.get(record.state) ?? { conversations: new Set<string>(), iterations: 0, groups: new Set<string>() };
      deadEnds.set(record.state, dead);
      dead.conversations.add(record.conversation);
      dead.iterations++;
      asked.forEach((group) => dead.groups.add(group));
    }
  }
  const toolImpacts = [...tools].map(([tool, { total, byGroup }]) => ({
    tool,
    ...total,
    byGroup: [...byGroup].map(([group, c]) => ({ group, ...c })).sort(byLoss((g) => g.group)),
  }));
  return {
    workspace: registry.workspace,
    iterations,
    conversations: conversations.size,
    tools: toolImpacts.sort(byLoss((t) => t.tool)),
    groups: [...groups].map(([group, c]) => ({ group, ...c })).sort(byLoss((g) => g.group)),
    deadEnds: [...deadEnds]
      .map(([state, d]) => ({ state, conversations: d.conversations.size, iterations: d.iterations, groups: [...d.groups].sort() }))
      .sort((a, b) => b.conversations - a.conversations || compareText(a.state, b.state)),
  };
}

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Most losses first, then most losses of used tools, then by name. */
const byLoss =
  <T extends Loss>(name: (item: T) => string) =>
  (a: T, b: T): number =>
    b.losing - a.losing || b.losingUsed - a.losingUsed || compareText(name(a), name(b));

function count(c: Counter, losing: boolean, losingUsed: boolean): void {
  c.iterations++;
  if (losing) c.losing++;
  if (losingUsed) c.losingUsed++;
}

/** The groups a request named, as the per-group counts label them: `default` for none given, `*` for every group. */
function groupLabels(requested: readonly string[] | null): readonly string[] {
  const { groups, wildcard } = normalizeRequestGroups(requested);
  if (wildcard) return [WILDCARD];
  return requested === null ? [DEFAULT_GROUP] : groups;
}

/** Whether the change takes a tool away from a recorded iteration that used it, or makes a state a dead end. */
export const impactBreaksUse = (impact: ConfigImpact): boolean => impact.tools.some((t) => t.losingUsed > 0) || impact.deadEnds.length > 0;
