/**
 * The stand-ins playing the orchestrator scenario (dev/stand-ins/orchestrator-scenario.ts) — its tools, scripted
 * model, templates, token usage, graph RAG and librarian — for whichever agent serves the flow (ours, or
 * TrustGraph's orchestrator), and one case of it sent the way TrustGraph's gateway sends it, normalised for
 * comparison with the golden fixtures.
 */
import { startAgentHarness, type AgentHarness, type AgentHarnessOptions } from './agent-harness.js';
import {
  gatewayRequestPayload,
  normaliseSequence,
  scenarioGraphRag,
  scenarioReact,
  scenarioUsage,
  SCENARIO_TEMPLATES,
  SCENARIO_TOOLS,
  type NormalisedSequence,
  type ScenarioCase,
} from '../../dev/stand-ins/orchestrator-scenario.js';

export async function startScenarioHarness(options: AgentHarnessOptions): Promise<AgentHarness> {
  const h = await startAgentHarness({
    tools: SCENARIO_TOOLS,
    script: scenarioReact,
    templates: SCENARIO_TEMPLATES,
    graphRag: scenarioGraphRag,
    librarian: true,
    ...options,
  });
  h.prompt.usage = scenarioUsage;
  return h;
}

/** Everything the case produced: the responses, the requests published on the request topic, the prompt calls. */
export async function runScenarioCase(h: AgentHarness, scenario: ScenarioCase, timeoutMs: number): Promise<NormalisedSequence> {
  const result = await h.askRaw(gatewayRequestPayload(scenario), { timeoutMs, settleMs: 1_000 });
  return normaliseSequence(
    result.messages.map((m) => m.raw),
    result.nextMessages.map((m) => m.raw),
    h.prompt.calls,
  );
}
