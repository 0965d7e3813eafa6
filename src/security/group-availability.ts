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
 */
import { z } from 'zod';
import { isWithin } from '../tools/registry/group-hierarchy.js';

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
type Weekday = (typeof WEEKDAYS)[number];

const TIME = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$|^24:00$/, 'a time as HH:MM (00:00 to 24:00)');

export const AvailabilityRuleSchema = z.strictObject({
  groups: z.array(z.string()).min(1),
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
    .min(1),
});

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

/** The weekday and minute of the day at `now` in `zone`. */
function localTime(now: Date, zone: string): { day: Weekday; minute: number } {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: zone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(now);
  const part = (type: string): string => parts.find((p) => p.type === type)?.value ?? '';
  return { day: part('weekday').toLowerCase().slice(0, 3) as Weekday, minute: Number(part('hour')) * 60 + Number(part('minute')) };
}

/** Whether `now` falls inside one of the rule's windows. */
export function isAvailable(rule: AvailabilityRule, now: Date): boolean {
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

/** The groups among `groups` that the rules withdraw at `now`. */
export function withdrawnGroups(rules: readonly AvailabilityRule[], groups: readonly string[], now: Date, hierarchy: boolean): string[] {
  const closed = rules.filter((rule) => !isAvailable(rule, now)).flatMap((rule) => rule.groups);
  if (closed.length === 0) return [];
  return groups.filter((group) => closed.some((name) => (hierarchy ? isWithin(group, name) : group === name)));
}
