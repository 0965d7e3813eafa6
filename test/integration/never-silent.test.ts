/**
 * Never silent, on the real broker: whatever the size or shape of what comes in — a 500 KB emoji session id,
 * a 1 MiB question, a 900 KB request, Args nested 10 000 levels from the model, a tool value nested 200 000
 * levels in the config — every request ends with exactly one final message (an answer, or a small error
 * response saying what lifts the limit), an audit record is written, and the next request is answered.
 *
 * The cases run once per transport profile (PROFILES): what a transport can carry decides whether a large
 * request is answered (the binary protocol, 5 MB messages, as TrustGraph's agent answers it) or refused
 * with a clear error (the WebSocket API, 1 MiB text frames). Requests larger than a WebSocket frame are
 * published through the broker's REST producer, as TrustGraph's gateway would publish them over the
 * binary protocol. Large requests are sent without the harness's observer subscription on the request topic
 * (see AskOptions.observeNext): TrustGraph's gateway has none, and with it the broker may drop the agent's copy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FrameTooLargeError } from '../../src/bus/errors.js';
import { NativeTransport } from '../../src/bus/pulsar/native/native-transport.js';
import { loadPulsarClient } from '../../src/bus/pulsar/native/pulsar-client-module.js';
import type { Transport } from '../../src/bus/transport.js';
import type { AgentResponse } from '../../src/wire/index.js';
import type { PromptReply, PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import { startAgentHarness, type AgentHarness, type AgentHarnessOptions, type AskResult } from '../support/agent-harness.js';
import { knowledgeQueryTool } from '../../dev/flow-config.js';
import { capturingLogger } from '../support/log-capture.js';
import { sample, scrape } from '../support/prometheus-text.js';
import { publishOverRest } from '../support/rest-producer.js';
import { brokerUrls } from '../support/transport-contract.js';

const { webSocketUrl, serviceUrl } = brokerUrls();
const webServiceUrl = webSocketUrl.replace(/^ws/, 'http');

interface Profile {
  readonly name: string;
  /** Harness options selecting the transport. */
  readonly options: Partial<AgentHarnessOptions>;
  /** The agent's own transport, when not the harness's WebSocket one (closed after the suite). */
  readonly agentTransport?: () => Promise<Transport>;
  /** Whether a ~1 MB request fits what this transport carries (else it is refused with an error). */
  readonly carriesLargeRequests: boolean;
}

/** The native binding is optional: the native profile runs where it loads, and is reported as skipped elsewhere. */
const nativeLoads = await loadPulsarClient().then(
  () => true,
  () => false,
);

const PROFILES: readonly Profile[] = [
  { name: 'websocket', options: {}, carriesLargeRequests: false },
  {
    name: 'native',
    options: {},
    agentTransport: () => NativeTransport.create({ serviceUrl }),
    carriesLargeRequests: true,
  },
];

const DEEP_ARGS_LEVELS = 10_000;
const DEEP_TOOL_LEVELS = 200_000;

/**
 * "@deep-args": Args nested 10 000 levels, then an answer quoting the observation; "@big-answer": a 20 000
 * character answer; anything else: "ok".
 */
function script(terms: PromptTerms): PromptReply {
  const history = terms.history as { observation: string }[];
  if (String(terms.question) === '@big-answer') return `Thought: long\nFinal Answer: ${'A'.repeat(20_000)}`;
  if (String(terms.question) !== '@deep-args') return 'Thought: I can answer directly\nFinal Answer: ok';
  if (history.length > 0) return `Thought: done\nFinal Answer: ${history[0]?.observation ?? ''}`;
  const nested = `${'['.repeat(DEEP_ARGS_LEVELS)}"x"${']'.repeat(DEEP_ARGS_LEVELS)}`;
  return `Thought: nest\nAction: kq\nArgs: {"question": ${nested}}`;
}

const finals = (responses: readonly AgentResponse[]) => responses.filter((r) => r.end_of_dialog);

for (const profile of PROFILES) {
  const runs = profile.name !== 'native' || nativeLoads;
  const title = `every request ends with exactly one final message (${profile.name}${runs ? '' : ': pulsar-client binding not installed'})`;
  describe.skipIf(!runs)(title, () => {
    let h: AgentHarness;
    let agentTransport: Transport | undefined;
    const { logger, auditsOf } = capturingLogger();
    const restPublish = (topic: string, payload: Buffer, properties: Record<string, string>) =>
      publishOverRest(webServiceUrl, topic, payload, properties);

    beforeAll(async () => {
      agentTransport = await profile.agentTransport?.();
      h = await startAgentHarness({
        webSocketUrl,
        ...(agentTransport ? { wrapAgentTransport: () => agentTransport! } : {}),
        app: {},
        logger,
        script,
        settings: { concurrency: 2, maxIterations: 10 },
        tools: {
          kq: knowledgeQueryTool('kq'),
          // Present from the start: the agent must still load its configuration and become ready.
          deep: `{"type": "knowledge-query", "name": "deep", "description": "d", "extra": ${'['.repeat(DEEP_TOOL_LEVELS)}${']'.repeat(DEEP_TOOL_LEVELS)}}`,
        },
        ...profile.options,
      });
    });

    afterAll(async () => {
      await h?.stop();
      await agentTransport?.close();
    });

    /** Exactly one final message (late duplicates included), an audit record, and the next request answered. */
    const expectOneEnding = async (result: AskResult, outcome: string): Promise<Record<string, unknown>> => {
      expect(finals(result.responses)).toHaveLength(1);
      expect(result.undecodable).toHaveLength(0);
      await h.waitFor(() => auditsOf(result.id).some((a) => a.outcome === outcome), `an audit record with outcome ${outcome}`);
      const next = await h.ask({ question: 'still there?' });
      expect(next.last).toMatchObject({ message_type: 'answer', content: 'ok', end_of_dialog: true, error: null });
      return auditsOf(result.id).find((a) => a.outcome === outcome)!;
    };

    /** On a transport that carries large requests: the request was answered (true). Elsewhere: false, to check the refusal. */
    const answeredWhereCarried = async (result: AskResult): Promise<boolean> => {
      if (!profile.carriesLargeRequests) return false;
      expect(result.last).toMatchObject({ message_type: 'answer', content: 'ok', end_of_dialog: true, error: null });
      await expectOneEnding(result, 'answer');
      return true;
    };

    const failures = async (reason: string): Promise<number> =>
      sample(await scrape(h.httpUrl()), 'tg_agent_iteration_failures_total', { reason }) ?? NaN;

    it('answers a request whose session_id is 500 KB of 4-byte emoji, with small message ids', async () => {
      const sessionId = '\u{1F600}'.repeat(125_000);
      const payload = JSON.stringify({ question: 'hello', session_id: sessionId, history: [], streaming: false });
      const result = await h.askRaw(payload, { settleMs: 1000, timeoutMs: 30_000, observeNext: false });
      expect(result.last).toMatchObject({ message_type: 'answer', content: 'ok', end_of_dialog: true, error: null });
      // Every response names the conversation by a bounded key, never by the 1.5 MB escaped session id.
      for (const message of result.messages) expect(message.payload.length).toBeLessThan(10_000);
      expect(result.last.message_id).toMatch(/^urn:trustgraph:agent:sha256-[0-9a-f]{64}\/final$/);
      const audit = await expectOneEnding(result, 'answer');
      expect((audit.session_id as string).length).toBeLessThanOrEqual(260);
    });

    it('answers a 1 MiB question, or refuses it with an error that names what lifts the limit', async () => {
      const before = await failures('too-large');
      const payload = JSON.stringify({ question: 'q'.repeat(1_048_576), history: [], streaming: false });
      const result = await h.askRaw(payload, { publish: restPublish, settleMs: 1000, timeoutMs: 40_000, observeNext: false });
      if (await answeredWhereCarried(result)) return;
      expect(result.responses).toHaveLength(1);
      expect(result.last).toMatchObject({ message_type: 'error', end_of_message: true, end_of_dialog: true });
      expect(result.last.error?.message).toMatch(/--max-request-bytes/);
      expect(result.last.error?.message).toMatch(/webSocketMaxTextFrameSize/);
      expect(result.last.error?.message).toMatch(/--transport native/);
      const audit = await expectOneEnding(result, 'error');
      expect(audit).toMatchObject({ failure: 'too-large', iteration: 0 });
      expect(await failures('too-large')).toBe(before + 1);
    });

    it('answers a 900 KB request (a long history), or refuses it with a clear error', async () => {
      const history = Array.from({ length: 9 }, (_, i) => ({
        thought: `step ${i}`,
        action: 'kq',
        arguments: { question: 'q' },
        observation: 'o'.repeat(100_000),
      }));
      const payload = JSON.stringify({ question: 'summarise', history, streaming: false });
      expect(payload.length).toBeGreaterThan(900_000);
      const result = await h.askRaw(payload, { publish: restPublish, settleMs: 1000, timeoutMs: 40_000, observeNext: false });
      if (await answeredWhereCarried(result)) return;
      expect(result.responses).toHaveLength(1);
      expect(result.last.error?.message).toMatch(new RegExp(`the request is ${payload.length} bytes, over the limit`));
      await expectOneEnding(result, 'error');
    });

    it('audits a request that cannot be decoded, and counts it', async () => {
      const before = await failures('undecodable');
      const result = await h.askRaw('{"question": "unterminated', { settleMs: 1000 });
      expect(result.responses).toHaveLength(1);
      expect(result.last).toMatchObject({ message_type: '', end_of_dialog: true, error: { type: 'agent-error' } });
      const audit = await expectOneEnding(result, 'error');
      expect(audit).toMatchObject({ failure: 'undecodable', iteration: 0, error: expect.stringMatching(/^Cannot decode AgentRequest: invalid JSON/) });
      expect(await failures('undecodable')).toBe(before + 1);
    });

    it('turns Args nested 10 000 levels into an observation the model can act on', async () => {
      const result = await h.ask({ question: '@deep-args' }, { settleMs: 1000, timeoutMs: 30_000 });
      const observation = result.responses.find((r) => r.message_type === 'observation');
      expect(observation?.content).toMatch(/Args has nesting deeper than 100 levels/);
      expect(result.responses.some((r) => /Maximum call stack/.test(r.content))).toBe(false);
      expect(result.last).toMatchObject({ message_type: 'answer', end_of_dialog: true, error: null });
      expect(result.last.content).toMatch(/nesting deeper than 100 levels/);
      expect(result.nextRequests).toHaveLength(1);
      await expectOneEnding(result, 'answer');
    });

    it('leaves out a tool value nested 200 000 levels, names it, and serves the rest', async () => {
      // The agent became ready with it in its configuration (beforeAll); the tool is reported, not loaded.
      const registry = h.service.registries.get(h.workspace);
      expect(registry.get('deep')).toBeUndefined();
      expect(registry.get('kq')).toBeDefined();
      const problem = registry.problems.find((p) => p.key === 'deep');
      expect(problem?.text).toContain(`workspace "${h.workspace}", tool key "deep"`);
      expect(problem?.text).toMatch(/nesting deeper than 64 levels; left out/);

      // A change that brings another such value applies too (kept small: the config stand-in answers over a
      // WebSocket frame), and requests are still answered.
      await h.putTool('deeper', `{"type": "knowledge-query", "name": "deeper", "x": ${'{"d": '.repeat(5_000)}1${'}'.repeat(5_000)}}`);
      await h.configApplied();
      expect(h.service.registries.get(h.workspace).problems.some((p) => p.key === 'deeper')).toBe(true);
      expect(h.service.readiness().ready).toBe(true);
      const result = await h.ask({ question: 'hello' }, { settleMs: 1000 });
      expect(result.last).toMatchObject({ message_type: 'answer', content: 'ok', end_of_dialog: true });
      await expectOneEnding(result, 'answer');
    });
  });
}

/**
 * The agent's transport as on a broker whose limit the agent does not know (e.g. the binary protocol against a
 * broker with a lowered `maxMessageSize`): messages over `limit` bytes are refused at send, as pulsar-client
 * refuses them (`MessageTooBig`, which the native transport raises as FrameTooLargeError), and no limit is
 * advertised for sizing.
 */
function refusingOver(limit: number): (inner: Transport) => Transport {
  return (inner) => ({
    kind: 'native',
    status: () => inner.status(),
    onStatus: (listener) => inner.onStatus(listener),
    subscribe: (options) => inner.subscribe(options),
    close: () => inner.close(),
    createProducer: async (topic) => {
      const producer = await inner.createProducer(topic);
      return {
        topic: producer.topic,
        close: () => producer.close(),
        send: async (message) => {
          if (message.payload.length > limit) {
            const size = message.payload.length;
            // As the native transport words a MessageTooBig from the binding.
            throw new FrameTooLargeError(topic, size, limit, size, `message for ${topic} is ${size} bytes, over the broker's ${limit}-byte maxMessageSize; it was not sent (MessageTooBig). Raise maxMessageSize on the broker`);
          }
          await producer.send(message);
        },
      };
    },
  });
}

describe('a final message the transport refuses after sizing', () => {
  let h: AgentHarness;
  const { logger, auditsOf } = capturingLogger();

  beforeAll(async () => {
    h = await startAgentHarness({ webSocketUrl, app: {}, logger, script, wrapAgentTransport: refusingOver(8_000) });
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('is replaced by one small error response saying what happened, audited and counted; no nack', async () => {
    const result = await h.ask({ question: '@big-answer' }, { settleMs: 1000 });
    expect(finals(result.responses)).toHaveLength(1);
    expect(result.responses.some((r) => r.message_type === 'answer')).toBe(false);
    expect(result.last).toMatchObject({ message_type: 'error', end_of_message: true, end_of_dialog: true });
    expect(result.last.error?.message).toMatch(/over the broker's 8000-byte maxMessageSize; it was not sent \(MessageTooBig\)/);
    await h.waitFor(() => auditsOf(result.id).length === 1, 'the audit record');
    expect(auditsOf(result.id)[0]).toMatchObject({ outcome: 'error', failure: 'too-large' });
    const text = await scrape(h.httpUrl());
    expect(sample(text, 'tg_agent_iteration_failures_total', { reason: 'too-large' })).toBe(1);
    expect(sample(text, 'tg_agent_iteration_failures_total', { reason: 'broker-unreachable' })).toBe(0);
    const next = await h.ask({ question: 'still there?' });
    expect(next.last).toMatchObject({ message_type: 'answer', content: 'ok', end_of_dialog: true, error: null });
  });
});
