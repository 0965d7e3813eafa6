/**
 * The agent's hedged calls as its `/metrics` counts them (`tg_agent_hedged_requests_total`), by outcome, summed
 * over services: what the benchmarks report as the cost of hedging in duplicate model calls.
 */
import { HEDGE_OUTCOMES, type HedgeOutcome } from '../../src/bus/hedge-policy.js';
import type { AgentProcess } from './agent-process.js';
import { metricSum } from './options.js';

export type HedgeCounts = Record<HedgeOutcome, number>;

export async function readHedges(agent: AgentProcess): Promise<HedgeCounts> {
  const { text } = await agent.get('/metrics');
  return Object.fromEntries(HEDGE_OUTCOMES.map((outcome) => [outcome, metricSum(text, 'tg_agent_hedged_requests_total', { outcome })])) as HedgeCounts;
}

export function hedgesBetween(before: HedgeCounts, after: HedgeCounts): HedgeCounts {
  return Object.fromEntries(HEDGE_OUTCOMES.map((outcome) => [outcome, after[outcome] - before[outcome]])) as HedgeCounts;
}

/** Requests sent a second time: every hedge that went out, whichever reply came first. */
export function duplicates(hedges: HedgeCounts): number {
  return hedges.hedge_first + hedges.original_first + hedges.neither;
}
