/**
 * Asking the agent as TrustGraph's API gateway does, with TrustGraph's own code (dev/trustgraph/gateway_agent.py
 * in the TrustGraph venv), on the Pulsar or the RabbitMQ backend, and what to check of the answer.
 */
import { expect } from 'vitest';
import { agentFlowTopics } from '../../dev/flow-config.js';
import { runDriver } from '../../dev/trustgraph-pieces.js';
import type { AgentHarness } from './agent-harness.js';
import { AGENT_RESPONSE_FIELDS } from './trustgraph-fields.js';

export type Json = Record<string, unknown>;

/** One response as gateway_agent.py reports it. */
export interface GatewayResponse {
  /** The JSON payload as it came off the bus. */
  raw: Json;
  /** The AgentResponse as TrustGraph's backend deserialised it (dataclass → dict). */
  message: Json;
  /** What the gateway hands its client (AgentResponseTranslator.encode_with_completion). */
  translated: Json;
  final: boolean;
}

export interface GatewayResult {
  /** The AgentRequest TrustGraph's translator made and its serialiser published. */
  request: Json;
  responses: GatewayResponse[];
}

/** `brokerUrl`: `pulsar://…` for TrustGraph's Pulsar backend, `amqp://…` for its RabbitMQ backend. */
export async function askAsGateway(brokerUrl: string, h: AgentHarness, body: Json, timeoutSeconds = 30): Promise<GatewayResult> {
  const topics = agentFlowTopics(h.workspace, h.flow);
  const { stdout } = await runDriver(
    'gateway_agent.py',
    [brokerUrl, topics.request ?? '', topics.response ?? '', JSON.stringify(body), String(timeoutSeconds)],
    (timeoutSeconds + 30) * 1000,
  );
  return JSON.parse(stdout) as GatewayResult;
}

export const typesOf = (result: GatewayResult): string => result.responses.map((r) => r.message.message_type).join(' ');
export const contentOf = (result: GatewayResult, type: string): string =>
  result.responses
    .filter((r) => r.message.message_type === type)
    .map((r) => String(r.message.content))
    .join('');

/** Exactly one final message, the last, and every payload carrying every 2.11.1 AgentResponse field. */
export function expectOneFinal(result: GatewayResult): void {
  expect(result.responses.length).toBeGreaterThan(0);
  expect(result.responses.map((r) => r.final)).toEqual([...result.responses.map(() => false).slice(1), true]);
  for (const response of result.responses) {
    expect(Object.keys(response.raw).sort()).toEqual(AGENT_RESPONSE_FIELDS);
    expect(Object.keys(response.message).sort()).toEqual(AGENT_RESPONSE_FIELDS);
    expect(response.message.end_of_dialog).toBe(response.final);
    expect(response.translated.end_of_dialog).toBe(response.final);
  }
}

