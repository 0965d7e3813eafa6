/**
 * Time windows for tool groups (the tool-group spec's §11.1, dynamic assignment by time), configured per
 * workspace in its group policy:
 *
 *   "availability": [{"groups": ["trading"], "time-zone": "America/New_York",
 *                     "windows": [{"days": ["mon", "tue", "wed", "thu", "fri"], "from": "09:30", "to": "16:00"}]}]
 *
 * A group a rule names is offered only while the local time in the rule's zone is inside one of its windows
 * (`from` inclusive, `to` exclusive; a window whose `to` is not after `from` runs past midnight into the next day;
 * `days` are the days a window starts on; an empty `days` means never). Outside, the group is withdrawn from the
 * request's groups before its tools are chosen: availability only ever narrows what the policy allows. Under the
 * group hierarchy a rule on a group covers the groups below it too.
 *
 * A rule may instead (or as well) name a load condition: `"load": {"service": "graph-rag", "max-error-rate": 0.5,
 * "max-latency-seconds": 20, "window-seconds": 60, "min-calls": 5}` withdraws its groups while the named
 * TrustGraph service's calls of the last `window-seconds` (at least `min-calls` of them) failed more often, or
 * took longer on average, than the limits. A rule with both is open only inside a window and under the limits.
 *
 * A rule may name single tools (`"tools": ["place-order"]`) instead of, or as well as, groups: a closed rule's
 * tools are left out of the offered set whatever groups the request runs with.
 */
import { z } from 'zod';
import { listText, quote } from '../errors/index.js';
import { FLOW_SERVICES, isFlowService } from '../wire/index.js';
import { ancestorsOf, isWithin } from './hierarchy.js';
import { WILDCARD } from './selection.js';

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
type Weekday = (typeof WEEKDAYS)[number];

const TIME = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$|^24:00$/, 'a time as HH:MM (00:00 to 24:00)');

const LoadSchema = z
  .strictObject({
    /** TrustGraph's service name, as in `--service-timeouts`: `graph-rag`, `prompt`, `mcp-tool`, ... */
    service: z.string().min(1),
    'max-error-rate': z.number().min(0).max(1).optional(),
    'max-latency-seconds': z.number().positive().optional(),
    'window-seconds': z.number().positive().default(60),
    'min-calls': z.number().int().min(1).default(5),
  })
  .refine((load) => load['max-error-rate'] !== undefined || load['max-latency-seconds'] !== undefined, 'needs max-error-rate or max-latency-seconds');

export const AvailabilityRuleSchema = z
  .strictObject({
    groups: z.array(z.string()).default([]),
    /** Single tools (configured names) the rule withdraws while it is closed. */
    tools: z.array(z.string()).default([]),
    'time-zone': z
      .string()
      .default('UTC')
      .refine((zone) => isTimeZone(zone), 'an IANA time zone, e.g. "Europe/London" or "UTC"'),
    windows: z
      .array(
        z.strictObject({
          days: z.array(z.enum(WEEKDAYS)).default([...WEEKDAYS]),
          from: TIME,
          to: TIME,
        }),
      )
      .min(1)
      .optional(),
    load: LoadSchema.optional(),
  })
  .refine((rule) => rule.windows !== undefined || rule.load !== undefined, 'needs windows or load')
  .refine((rule) => rule.groups.length + rule.tools.length > 0, 'names no group and no tool (give "groups", "tools" or both)');

export type AvailabilityRule = z.infer<typeof AvailabilityRuleSchema>;

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const minutesOf = (time: string): number => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));

/** One formatter per time zone: building one costs more than using it, and rules are read on every request. */
const formatters = new Map<string, Intl.DateTimeFormat>();

/** The weekday and minute of the day at `now` in `zone`. */
function localTime(now: Date, zone: string): { day: Weekday; minute: number } {
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: zone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    formatters.set(zone, format);
  }
  const parts = format.formatToParts(now);
  const part = (type: string): string => parts.find((p) => p.type === type)?.value ?? '';
  return { day: part('weekday').toLowerCase().slice(0, 3) as Weekday, minute: Number(part('hour')) * 60 + Number(part('minute')) };
}

/** How TrustGraph's services have been answering lately (observability/downstream-load.ts). */
export interface LoadReader {
  recent(service: string, windowMs: number): { calls: number; errorRate: number; meanSeconds: number };
}

/** Why a group is withdrawn: outside its windows, or a service it depends on is over its limits. */
export type WithdrawalReason = 'time-window' | 'load';

export interface Withdrawal {
  readonly group: string;
  readonly reason: WithdrawalReason;
}

/** A single tool a rule withdraws now, with why. */
export interface ToolWithdrawal {
  readonly tool: string;
  readonly reason: WithdrawalReason;
}

/** Whether `now` falls inside one of the rule's windows (a rule without windows is always in one). */
export function isAvailable(rule: AvailabilityRule, now: Date): boolean {
  if (rule.windows === undefined) return true;
  const { day, minute } = localTime(now, rule['time-zone']);
  const yesterday = WEEKDAYS[(WEEKDAYS.indexOf(day) + 6) % 7]!;
  return rule.windows.some((window) => {
    const from = minutesOf(window.from);
    const to = minutesOf(window.to);
    if (from < to) return window.days.includes(day) && minute >= from && minute < to;
    // Past midnight: the evening part on a listed day, the morning part on the day after one.
    return (window.days.includes(day) && minute >= from) || (window.days.includes(yesterday) && minute < to);
  });
}

/** Whether the rule's service is over its limits now (a rule without a load condition never is). */
export function isOverloaded(rule: AvailabilityRule, load: LoadReader | undefined): boolean {
  if (rule.load === undefined || load === undefined) return false;
  const limits = rule.load;
  const recent = load.recent(limits.service, limits['window-seconds'] * 1000);
  if (recent.calls < limits['min-calls']) return false;
  return recent.errorRate > (limits['max-error-rate'] ?? 1) || recent.meanSeconds > (limits['max-latency-seconds'] ?? Infinity);
}

/** The rules closed at `now`, each with why. */
function closedRules(rules: readonly AvailabilityRule[], now: Date, load: LoadReader | undefined): { rule: AvailabilityRule; reason: WithdrawalReason }[] {
  const closed: { rule: AvailabilityRule; reason: WithdrawalReason }[] = [];
  for (const rule of rules) {
    const reason: WithdrawalReason | undefined = !isAvailable(rule, now) ? 'time-window' : isOverloaded(rule, load) ? 'load' : undefined;
    if (reason) closed.push({ rule, reason });
  }
  return closed;
}

/** What the rules withdraw at `now`: the groups among `groups` and the single tools, each once with why (the first rule that closes it). */
export function withdrawals(
  rules: readonly AvailabilityRule[],
  groups: readonly string[],
  now: Date,
  hierarchy: boolean,
  load?: LoadReader,
): { groups: Withdrawal[]; tools: ToolWithdrawal[] } {
  const closed = closedRules(rules, now, load);
  if (closed.length === 0) return { groups: [], tools: [] };
  const closedGroups = closed.flatMap(({ rule, reason }) => rule.groups.map((group) => ({ group, reason })));
  const withdrawnGroups = groups.flatMap((group) => {
    const by = closedGroups.find((c) => (hierarchy ? isWithin(group, c.group) : group === c.group));
    return by ? [{ group, reason: by.reason }] : [];
  });
  const tools = new Map<string, WithdrawalReason>();
  for (const { rule, reason } of closed) for (const tool of rule.tools) if (!tools.has(tool)) tools.set(tool, reason);
  return { groups: withdrawnGroups, tools: [...tools].map(([tool, reason]) => ({ tool, reason })) };
}

/** The groups among `groups` that the rules withdraw at `now`. */
export function withdrawnGroups(rules: readonly AvailabilityRule[], groups: readonly string[], now: Date, hierarchy: boolean, load?: LoadReader): Withdrawal[] {
  return withdrawals(rules, groups, now, hierarchy, load).groups;
}

/** The single tools the rules withdraw at `now`. */
export function withdrawnTools(rules: readonly AvailabilityRule[], now: Date, load?: LoadReader): ToolWithdrawal[] {
  return withdrawals(rules, [], now, false, load).tools;
}

/** What the checks of rules need of the group policy (policy.ts). */
export interface AllowedGroups {
  readonly allowedGroups: ReadonlySet<string>;
  readonly groupHierarchy: boolean;
}

/**
 * Whether a rule on `group` can ever meet a request's groups: a request runs only with groups the policy allows
 * (with the hierarchy: those and the groups below them, and a rule covers the groups below its own), so the
 * rule's group must be allowed, or with the hierarchy be below or above an allowed one. One set built per
 * policy; each question costs the group's depth.
 */
export function requestableByRules(policy: AllowedGroups): (group: string) => boolean {
  if (!policy.groupHierarchy) return (group) => policy.allowedGroups.has(group);
  const aboveAllowed = new Set<string>();
  for (const allowed of policy.allowedGroups) for (const ancestor of ancestorsOf(allowed)) aboveAllowed.add(ancestor);
  return (group) => policy.allowedGroups.has(group) || aboveAllowed.has(group) || ancestorsOf(group).some((ancestor) => policy.allowedGroups.has(ancestor));
}

/**
 * The rules' parts that can never withdraw anything, whatever the workspace's tools, each kind one sentence:
 * group `"*"` (a `"*"` request is never narrowed, and no request's groups hold `"*"`), a load service the agent
 * does not call, a group no request runs with. Accepted rules stay in force; the sentences say what to fix.
 */
export function availabilityProblems(rules: readonly AvailabilityRule[], policy: AllowedGroups): string[] {
  const requestable = requestableByRules(policy);
  let lowerAllowed: Map<string, string> | undefined;
  const wildcard: string[] = [];
  const services: string[] = [];
  const unrequestable: string[] = [];
  rules.forEach((rule, i) => {
    const where = `rule ${i + 1}`;
    for (const group of rule.groups) {
      if (group === WILDCARD) {
        wildcard.push(where);
      } else if (!requestable(group)) {
        lowerAllowed ??= new Map([...policy.allowedGroups].map((allowed) => [allowed.toLowerCase(), allowed]));
        const like = lowerAllowed.get(group.toLowerCase());
        unrequestable.push(`${quote(group)} (${where}${like === undefined ? '' : `; did you mean ${quote(like)}?`})`);
      }
    }
    if (rule.load !== undefined && !isFlowService(rule.load.service)) services.push(`${quote(rule.load.service)} (${where})`);
  });
  const problems: string[] = [];
  if (wildcard.length > 0) {
    problems.push(
      `availability ${listText(wildcard)} name${wildcard.length === 1 ? 's' : ''} group "*", which never matches: a rule withdraws groups a ` +
        'request runs with, and a "*" request is never narrowed; name the groups to withdraw',
    );
  }
  if (services.length > 0) {
    problems.push(
      `availability load service ${listText(services)} is not one the agent calls (${FLOW_SERVICES.join(', ')}): ` +
        'that load condition never closes its rule',
    );
  }
  if (unrequestable.length > 0) {
    problems.push(
      `availability names group ${listText(unrequestable)}, which allowed-groups does not allow: no request runs with ` +
        `${unrequestable.length === 1 ? 'it, so its rule never withdraws it' : 'them, so their rules never withdraw them'}`,
    );
  }
  return problems;
}
