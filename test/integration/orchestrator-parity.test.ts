/**
 * Our agent against TrustGraph 2.11.1's orchestrator: the scripted scenario of dev/stand-ins/orchestrator-scenario.ts,
 * the request published as TrustGraph's gateway publishes it, for each `pattern`; what comes back (every response,
 * every request the agent publishes on the request topic, every prompt call), normalised the same way, must equal
 * what TrustGraph's own orchestrator produced on the same broker with the same stand-ins — the golden fixtures
 * under test/fixtures/trustgraph-2.11.1/orchestrator/, which test/integration/trustgraph-orchestrator.test.ts keeps
 * honest against the live orchestrator.
 *
 * TrustGraph handles one request-topic message at a time; the agent runs with `concurrency: 1` and one request
 * consumer here so that a supervisor's subagents interleave in the same (topic) order and the sequences are
 * comparable message by message.
 *
 * Two differences are deliberate and documented (docs/trustgraph-compatibility.md), and are the only ones taken
 * out before comparing:
 *  - TrustGraph 2.11.1's meta-router never sees its `agent-pattern` / `agent-task-type` config (so an empty
 *    `pattern` always runs react/general); ours reads it. The empty-pattern cases therefore run our agent without
 *    that config, where both must fall back to react/general the same way.
 *  - Our `agent-react` terms show each tool argument's `required` flag (docs/differences.md);
 *    it is removed from our prompt calls before they are compared.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  caseTitle,
  SCENARIO_CASES,
  sequenceOutline,
  SCENARIO_ROUTER_CONFIG,
  type NormalisedSequence,
  type ScenarioCase,
} from '../../dev/stand-ins/orchestrator-scenario.js';
import { runScenarioCase, startScenarioHarness } from '../support/orchestrator-scenario-harness.js';
import { brokerUrls } from '../support/transport-contract.js';
import { testTransports, type TransportKind } from '../support/transports.js';

const { webSocketUrl } = brokerUrls();
const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'trustgraph-2.11.1', 'orchestrator');

type Fixture = NormalisedSequence & { outline: string[] };


/** Our `agent-react` tool arguments without the `required` flag TrustGraph's do not have. */
function withoutRequiredFlags(prompts: NormalisedSequence['prompts']): NormalisedSequence['prompts'] {
  return prompts.map((call) => {
    const c = call as { id: string; terms: { tools?: { arguments?: Record<string, unknown>[] }[] } };
    if (c.id !== 'agent-react' || !Array.isArray(c.terms.tools)) return call;
    const tools = c.terms.tools.map((tool) => ({
      ...tool,
      arguments: (tool.arguments ?? []).map(({ required: _required, ...argument }) => argument),
    }));
    return { ...c, terms: { ...c.terms, tools } } as unknown as NormalisedSequence['prompts'][number];
  });
}

/** The four parts of a sequence compared, each its own test. */
type Part = 'outline' | 'prompts' | 'requests' | 'responses';
const PARTS: readonly Part[] = ['outline', 'prompts', 'requests', 'responses'];

/**
 * Parts where our agent is known to differ from TrustGraph's orchestrator today, by fixture: each runs as
 * `it.fails` (it must still differ; once it matches, the entry has to go). The exact differences are listed in
 * docs/trustgraph-compatibility.md ("Compared with TrustGraph 2.11.1's orchestrator").
 */
const KNOWN_DIFFERENCES: Readonly<Record<string, readonly Part[]>> = {
};

/**
 * Deliberate differences, applied to TrustGraph's fixture before comparing: the synthesis request's
 * `synthesise` step names the subagent results in its observation instead of copying them (they travel once,
 * in `subagent_results`, which is all TrustGraph's supervisor reads), so an answer twice as large still fits.
 */
function asWeDeliberatelyDiffer(part: Part, expected: unknown): unknown {
  if (part !== 'requests' || !Array.isArray(expected)) return expected;
  return (expected as { history?: { step_type?: string; subagent_results?: Record<string, string> }[] }[]).map((request) => ({
    ...request,
    ...(request.history
      ? {
          history: request.history.map((step) =>
            step.step_type === 'synthesise' ? { ...step, observation: `${Object.keys(step.subagent_results ?? {}).length} subagent results, in subagent_results` } : step,
          ),
        }
      : {}),
  }));
}

function partOf(sequence: NormalisedSequence, part: Part): unknown {
  if (part === 'outline') return sequenceOutline(sequence);
  if (part === 'prompts') return withoutRequiredFlags(sequence.prompts);
  return sequence[part];
}

/** Our agent serving the flow, the stand-ins playing the scenario (as for TrustGraph's orchestrator). */
async function runOurs(transport: TransportKind, scenario: ScenarioCase): Promise<NormalisedSequence> {
  // One consumer as well: on WebSocket the default is four (one socket each), and messages round-robined over four
  // sockets can reach the agent out of topic order on a busy machine, swapping a supervisor's subagents.
  const h = await startScenarioHarness({ webSocketUrl, transport, settings: { concurrency: 1, requestConsumers: 1 } });
  try {
    if (scenario.pattern !== '') {
      await h.config.putMany(h.workspace, SCENARIO_ROUTER_CONFIG);
      await h.configApplied();
    }
    return await runScenarioCase(h, scenario, 30_000);
  } finally {
    await h.stop();
  }
}

describe.each(testTransports())("our agent gives TrustGraph's orchestrator sequences [%s]", (transport) => {
  for (const scenario of SCENARIO_CASES) {
    describe(`${caseTitle(scenario)} (${scenario.fixture})`, () => {
      const expected = JSON.parse(readFileSync(join(FIXTURES, scenario.fixture), 'utf8')) as Fixture;
      let ours: NormalisedSequence | undefined;
      let failure: unknown;
      beforeAll(async () => {
        ours = await runOurs(transport, scenario).catch((error: unknown) => {
          failure = error;
          return undefined;
        });
      }, 90_000);
      for (const part of PARTS) {
        const known = KNOWN_DIFFERENCES[scenario.fixture]?.includes(part) ?? false;
        (known ? it.fails : it)(`${part}${known ? ' (known difference)' : ''}`, () => {
          if (!ours) throw new Error(`our agent gave no complete answer: ${String(failure)}`);
          expect(partOf(ours, part)).toEqual(part === 'outline' ? expected.outline : asWeDeliberatelyDiffer(part, expected[part]));
        });
      }
    });
  }
});
