/**
 * A message the agent must refuse without a word (a forged or replayed continuation: the `id` it carries may
 * name somebody else's dialog): sent like `ask`, then, once its refusal is audited — the audit line is written
 * after any response of the request is with the broker —, every response seen for its id is returned (none
 * expected).
 */
import type { AgentRequestInput } from '../../src/wire/index.js';
import { AskTimeoutError, type AgentHarness } from './agent-harness.js';

/** How long responses are collected: well past the audit line, after which nothing more can come. */
const COLLECT_MS = 3_000;

export async function responsesToRefused(
  h: AgentHarness,
  audits: () => Record<string, unknown>[],
  request: AgentRequestInput,
  properties: Record<string, string>,
): Promise<readonly unknown[]> {
  const id = properties.id ?? 'unknown';
  const refusals = (): number => audits().filter((a) => a.request_id === id && a.outcome === 'refused').length;
  const before = refusals();
  const asked = h.ask(request, { properties, timeoutMs: COLLECT_MS }).then(
    (result) => result.responses,
    (error: unknown) => {
      if (error instanceof AskTimeoutError) return error.responses;
      throw error;
    },
  );
  await h.waitFor(() => refusals() > before, `the refusal of ${id} in the audit`);
  return asked;
}
