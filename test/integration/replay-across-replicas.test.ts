/**
 * A captured signed `next` replayed where no single process remembers it, on the real broker and every
 * transport: to a second replica (it learned the signature from the first through the seen-signature ledger),
 * and to a replica that restarted (it listens only since its start, and the signature is older). Each replay is
 * refused without a word, audited and counted as `replayed-signature`; the model is not asked again; fresh
 * conversations go on being answered.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from 'pino';
import { createAgentApp, type AgentApp } from '../../src/app.js';
import type { Transport } from '../../src/bus/transport.js';
import { LISTENING_SKEW_MS, SIGNED_AT_PROPERTY } from '../../src/security/iteration-signature.js';
import { SettingsSchema, type Settings } from '../../src/settings.js';
import { knowledgeQueryTool } from '../../dev/flow-config.js';
import type { PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import { startAgentHarness, waitUntil, type AgentHarness } from '../support/agent-harness.js';
import { capturingLogger, type LogCapture } from '../support/log-capture.js';
import { responsesToRefused } from '../support/no-reply.js';
import { sample, scrape } from '../support/prometheus-text.js';
import { brokerUrls } from '../support/transport-contract.js';
import { createTestTransport, testTransports, type TransportKind } from '../support/transports.js';

const SIGNING_KEY = 'replay-test-signing-key-0123456789';
const PUBLISH_RETRY_MS = 2_000;
const { webSocketUrl, serviceUrl } = brokerUrls();
const history = (terms: PromptTerms) => terms.history as unknown[];

interface Replica {
  readonly app: AgentApp;
  /** `http://127.0.0.1:<port>` of its endpoints. */
  readonly httpUrl: string;
  readonly capture: LogCapture;
  readonly transport: Transport;
  stop(): Promise<void>;
}

/** Another replica of the harness's agent: the whole app, same settings and key, on its own connection. */
async function startReplica(h: AgentHarness, kind: TransportKind): Promise<Replica> {
  const capture = capturingLogger();
  const transport = createTestTransport(kind, { webSocketUrl, serviceUrl, logger: capture.logger.child({ side: 'replica-transport' }) });
  const settings: Settings = Object.freeze({ ...SettingsSchema.parse({}), ...h.settings, metricsPort: 0, shutdownGraceSeconds: 2, signingKey: SIGNING_KEY });
  const app = await createAgentApp(settings, transport, capture.logger as Logger);
  const port = await app.start();
  await waitUntil(() => app.service.readiness().ready, 'the second replica to be ready', 30_000);
  let stopped = false;
  return {
    app,
    httpUrl: `http://127.0.0.1:${port}`,
    capture,
    transport,
    async stop() {
      if (stopped) return;
      stopped = true;
      await app.stop().catch(() => undefined);
      await transport.close().catch(() => undefined);
    },
  };
}

describe.each(testTransports())('replays across replicas and restarts (real broker) [%s]', (kind) => {
  let h: AgentHarness | undefined;
  const replicas: Replica[] = [];

  afterEach(async () => {
    await Promise.allSettled(replicas.splice(0).map((r) => r.stop()));
    await h?.stop();
    h = undefined;
  });

  async function harness(capture: LogCapture): Promise<AgentHarness> {
    h = await startAgentHarness({
      transport: kind,
      webSocketUrl,
      app: { signingKey: SIGNING_KEY },
      // A short publish retry window keeps the listening-time margin (that window + the clock margin) short.
      settings: { publishRetryMs: PUBLISH_RETRY_MS },
      logger: capture.logger,
      tools: { a: knowledgeQueryTool('lookup', 'Look up') },
      script: (terms) => (history(terms).length === 0 ? 'Thought: look\nAction: lookup\nArgs: {"question": "q"}' : 'Thought: ok\nFinal Answer: done'),
    });
    return h;
  }

  it('a next replayed to another replica is refused there: it learned the signature from the replica that took it', async () => {
    const first = capturingLogger();
    const agent = await harness(first);
    const second = await startReplica(agent, kind);
    replicas.push(second);

    const result = await agent.ask({ question: 'q' });
    expect(result.last).toMatchObject({ message_type: 'answer', content: 'done', end_of_dialog: true });
    const genuine = result.nextMessages[0]!;
    // Which replica took the `next` (its second iteration is in that replica's audit)?
    const tookIt = (capture: LogCapture): boolean => capture.auditsOf(result.id).some((a) => a.iteration === 2 && a.outcome === 'answer');
    await agent.waitFor(() => tookIt(first) || tookIt(second.capture), 'the audit of the second iteration');
    const [taker, other] = tookIt(first) ? ['first', second] : ['second', undefined];
    // Stop that one: the replay can only reach the replica that never saw the `next` itself.
    if (taker === 'first') await agent.app!.stop();
    else await second.stop();
    const remaining = other ? other.capture : first;
    const reactCalls = agent.prompt.reactCalls().length;

    const audits = () => [...first.audits(), ...second.capture.audits()];
    expect(await responsesToRefused(agent, audits, genuine.value, genuine.properties)).toEqual([]);
    const refusal = remaining.auditsOf(result.id).find((a) => a.outcome === 'refused');
    expect((refusal?.denials as { reason: string }[])[0]?.reason).toBe('replayed-signature');
    expect(agent.prompt.reactCalls()).toHaveLength(reactCalls);
    const metrics = await scrape(other ? other.httpUrl : agent.httpUrl());
    expect(sample(metrics, 'tg_agent_requests_refused_total', { processor: 'agent-manager', reason: 'replayed-signature' })).toBe(1);
  });

  it('a next replayed after its replica restarted is refused by the new process, which still answers fresh conversations', async () => {
    const before = capturingLogger();
    const agent = await harness(before);
    const result = await agent.ask({ question: 'q' });
    expect(result.last).toMatchObject({ message_type: 'answer', end_of_dialog: true });
    const genuine = result.nextMessages[0]!;

    // The restart: the first process stops, a new one (no memory of what the first accepted) takes its place.
    // A signature from just before a replica listens is still taken as new (a publish retried through an outage,
    // clocks that differ): the replay is of one signed before that margin, as any captured earlier is.
    await agent.app!.stop();
    const signedAt = Number(genuine.properties[SIGNED_AT_PROPERTY]);
    const margin = PUBLISH_RETRY_MS + LISTENING_SKEW_MS;
    await waitUntil(() => Date.now() > signedAt + margin, 'the listening-time margin to pass', margin + 1_000, 100);
    const restarted = await startReplica(agent, kind);
    replicas.push(restarted);
    const reactCalls = agent.prompt.reactCalls().length;

    expect(await responsesToRefused(agent, restarted.capture.audits, genuine.value, genuine.properties)).toEqual([]);
    const refusal = restarted.capture.auditsOf(result.id).find((a) => a.outcome === 'refused');
    expect((refusal?.denials as { reason: string }[])[0]?.reason).toBe('replayed-signature');
    expect(agent.prompt.reactCalls()).toHaveLength(reactCalls);

    const fresh = await agent.ask({ question: 'again' });
    expect(fresh.last).toMatchObject({ message_type: 'answer', content: 'done', end_of_dialog: true });
    expect(restarted.capture.auditsOf(fresh.id).map((a) => a.outcome)).toContain('answer');
  });
});
