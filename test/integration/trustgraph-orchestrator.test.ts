/**
 * TrustGraph 2.11.1's own orchestrator (`agent-orchestrator`, trustgraph-flow's `trustgraph.agent.orchestrator`,
 * what TrustGraph's deployments run as `agent-manager`) from PyPI, on the test broker, driven by the scripted
 * scenario of dev/stand-ins/orchestrator-scenario.ts: for each `pattern` a request is sent the way TrustGraph's
 * gateway sends it, and the message sequence that comes back (and the requests the orchestrator publishes on the
 * request topic: `next` iterations, subagent requests and completions) must equal the golden fixture under
 * test/fixtures/trustgraph-2.11.1/orchestrator/.
 *
 * The stand-ins are the harness's (prompt with the scenario's templates and token usage, graph-rag, librarian,
 * config on TrustGraph's config queues, an observer of the explainability topic). The harness's own agent serves
 * the flow on queues of its own, away from the flow's agent topics, so only TrustGraph's orchestrator answers.
 *
 * `TG_RECORD_ORCHESTRATOR=1` writes the fixtures instead of comparing (after a TrustGraph upgrade or a scenario
 * change); the diff of the fixtures is then the change in TrustGraph's behaviour.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentHarness } from '../support/agent-harness.js';
import { agentFlowConfig, uniqueWorkspace } from '../../dev/flow-config.js';
import { sequenceOutline, SCENARIO_ROUTER_CONFIG, caseTitle, SCENARIO_CASES, type NormalisedSequence } from '../../dev/stand-ins/orchestrator-scenario.js';
import { runScenarioCase, startScenarioHarness } from '../support/orchestrator-scenario-harness.js';
import { brokerUrls } from '../support/transport-contract.js';
import { startTrustGraphProcess, trustgraphVenv, type TrustGraphProcess } from '../../dev/trustgraph-pieces.js';

const { webSocketUrl, serviceUrl } = brokerUrls();
/** Its processor id: its flows are the config type `processor:agent-orchestrator`, away from our agent's. */
const TRUSTGRAPH_ORCHESTRATOR_ID = 'agent-orchestrator';
const TG_ARGS = ['--pulsar-host', serviceUrl, '--no-metrics', '--no-loki-enabled', '--log-level', 'INFO', '--id', TRUSTGRAPH_ORCHESTRATOR_ID];
const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'trustgraph-2.11.1', 'orchestrator');
const RECORD = process.env.TG_RECORD_ORCHESTRATOR === '1';

let harness: AgentHarness | undefined;
let orchestrator: TrustGraphProcess | undefined;

beforeAll(async () => {
  await trustgraphVenv();
}, 11 * 60_000);

afterEach(async () => {
  await orchestrator?.stop();
  orchestrator = undefined;
  await harness?.stop();
  harness = undefined;
});

/** The stand-ins with the scenario, TrustGraph's orchestrator serving the flow, both ready. */
async function startTrustGraphOrchestrator(): Promise<AgentHarness> {
  const workspace = uniqueWorkspace('ws-tgorch');
  const idle = `tg-agent-idle-${workspace}`;
  const h = await startScenarioHarness({
    webSocketUrl,
    workspace,
    configQueues: 'trustgraph',
    // Our agent reads the flow too, but on queues nobody uses.
    flowConfig: { topics: { request: `request:tg:${idle}`, next: `request:tg:${idle}`, response: `response:tg:${idle}` } },
  });
  harness = h;
  await h.config.putMany(workspace, [
    { type: `processor:${TRUSTGRAPH_ORCHESTRATOR_ID}`, key: h.flow, value: agentFlowConfig(workspace, h.flow) },
    ...SCENARIO_ROUTER_CONFIG,
  ]);
  orchestrator = await startTrustGraphProcess('agent-orchestrator', TG_ARGS);
  await orchestrator.waitForOutput(new RegExp(`Started flow: ${workspace}/${h.flow}\\b`), 60_000);
  await orchestrator.waitForOutput(/Applied startup config version/, 60_000);
  await orchestrator.waitForOutput(new RegExp(`Loaded \\d+ tools for workspace ${workspace}`), 60_000);
  return h;
}

describe("TrustGraph's orchestrator on the scripted scenario", { timeout: 240_000 }, () => {
  for (const scenario of SCENARIO_CASES) {
    it(`${caseTitle(scenario)}: the sequence equals ${scenario.fixture}`, async () => {
      const h = await startTrustGraphOrchestrator();
      const sequence = await runScenarioCase(h, scenario, 90_000);
      const path = join(FIXTURES, scenario.fixture);
      if (RECORD) {
        mkdirSync(FIXTURES, { recursive: true });
        writeFileSync(path, `${JSON.stringify({ outline: sequenceOutline(sequence), ...sequence }, null, 2)}\n`);
      }
      const fixture = JSON.parse(readFileSync(resolve(path), 'utf8')) as NormalisedSequence & { outline: string[] };
      expect(sequenceOutline(sequence)).toEqual(fixture.outline);
      expect(sequence.responses).toEqual(fixture.responses);
      expect(sequence.requests).toEqual(fixture.requests);
      expect(sequence.prompts).toEqual(fixture.prompts);
      // One final message, the last.
      expect(sequence.responses.filter((r) => r.end_of_dialog)).toHaveLength(1);
      expect(sequence.responses.at(-1)?.end_of_dialog).toBe(true);
    });
  }
});
