/**
 * Where a conversation with no final message stopped, from the agent's audit lines (one per iteration, with the
 * request's id and its outcome) in its JSON log: `agent answered` (its final message never reached the gateway),
 * `midway` (an iteration ran, and nothing after it), `never seen` (no iteration ran: the request never reached
 * the agent).
 */
import { readFileSync } from 'node:fs';

export type LostAt = 'agent answered' | 'midway' | 'never seen';

export function whereLost(agentLog: string, ids: readonly string[]): Map<string, LostAt> {
  const wanted = new Set(ids);
  const outcomes = new Map<string, string[]>();
  for (const line of readFileSync(agentLog, 'utf8').split('\n')) {
    if (!line.includes('"agent-iteration"')) continue;
    const { request_id: id, outcome } = JSON.parse(line) as { request_id?: string; outcome?: string };
    if (id !== undefined && outcome !== undefined && wanted.has(id)) outcomes.set(id, [...(outcomes.get(id) ?? []), outcome]);
  }
  return new Map(
    ids.map((id): [string, LostAt] => {
      const seen = outcomes.get(id) ?? [];
      if (seen.length === 0) return [id, 'never seen'];
      return [id, seen.some((o) => o !== 'next') ? 'agent answered' : 'midway'];
    }),
  );
}
