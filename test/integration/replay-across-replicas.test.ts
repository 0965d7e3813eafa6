/**
 * A captured signed `next` replayed where no single process remembers it, on the real broker and every
 * transport: to a second replica (it learned the signature from the first through the seen-signature ledger),
 * and to a replica that restarted (it listens only since its start, and the signature is older). Each replay is
 * refused without a word, audited and counted as `replayed-signature`; the model is not asked again; fresh
 * conversations go on being answered. A flood of genuine but expired ledger records (what anyone reading the ledger
 * topic collects over a day) does not push the replayed signature out of the replica's memory.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from 'pino';
import { createAgentApp, type AgentApp } from '../../src/app.js';
import type { Transport } from '../../src/bus/transport.js';
import { IterationSigner, LISTENING_SKEW_MS, SIGNED_AT_PROPERTY } from '../../src/security/iteration-signature.js';
import { seenSignaturesQueue } from '../../src/security/seen-signature-ledger.js';
import { queueToTopic } from '../../src/bus/topics.js';
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

/** The agent of these tests: signing on, one tool, a conversation of two iterations. */
function signedHarness(kind: TransportKind, capture: LogCapture): Promise<AgentHarness> {
  return startAgentHarness({
    transport: kind,
    webSocketUrl,
    app: { signingKey: SIGNING_KEY },
    // A short publish retry window keeps the listening-time margin (that window + the clock margin) short.
    settings: { publishRetryMs: PUBLISH_RETRY_MS },
    logger: capture.logger,
    tools: { a: knowledgeQueryTool('lookup', 'Look up') },
    script: (terms) => (history(terms).length === 0 ? 'Thought: look\nAction: lookup\nArgs: {"question": "q"}' : 'Thought: ok\nFinal Answer: done'),
  });
}

/** The harness's agent and the replicas a test starts, stopped after each test. */
function signedAgents(kind: TransportKind): { harness(capture: LogCapture): Promise<AgentHarness>; replicas: Replica[] } {
  let h: AgentHarness | undefined;
  const replicas: Replica[] = [];
  afterEach(async () => {
    await Promise.allSettled(replicas.splice(0).map((r) => r.stop()));
    await h?.stop();
    h = undefined;
  });
  return {
    replicas,
    async harness(capture) {
      h = await signedHarness(kind, capture);
      return h;
    },
  };
}

/**
 * A conversation on two replicas; the one that ran its `next` is then stopped. Returns the `next` and the replica
 * that never ran it (it knows the signature from the ledger only).
 */
async function nextKnownFromTheLedger(agent: AgentHarness, first: LogCapture, second: Replica) {
  const result = await agent.ask({ question: 'q' });
  expect(result.last).toMatchObject({ message_type: 'answer', content: 'done', end_of_dialog: true });
  // Which replica took the `next` (its second iteration is in that replica's audit)?
  const tookIt = (capture: LogCapture): boolean => capture.auditsOf(result.id).some((a) => a.iteration === 2 && a.outcome === 'answer');
  await agent.waitFor(() => tookIt(first) || tookIt(second.capture), 'the audit of the second iteration');
  const firstTookIt = tookIt(first);
  // Stop that one: a replay can only reach the replica that never saw the `next` itself.
  if (firstTookIt) await agent.app!.stop();
  else await second.stop();
  const remaining = firstTookIt ? { app: second.app, httpUrl: second.httpUrl, capture: second.capture } : { app: agent.app!, httpUrl: agent.httpUrl(), capture: first };
  return { result, genuine: result.nextMessages[0]!, remaining };
}

describe.each(testTransports())('replays across replicas and restarts (real broker) [%s]', (kind) => {
  const { harness, replicas } = signedAgents(kind);

  it('a next replayed to another replica is refused there: it learned the signature from the replica that took it', async () => {
    const first = capturingLogger();
    const agent = await harness(first);
    const second = await startReplica(agent, kind);
    replicas.push(second);

    const { result, genuine, remaining: target } = await nextKnownFromTheLedger(agent, first, second);
    const remaining = target.capture;
    const reactCalls = agent.prompt.reactCalls().length;

    const audits = () => [...first.audits(), ...second.capture.audits()];
    expect(await responsesToRefused(agent, audits, genuine.value, genuine.properties)).toEqual([]);
    const refusal = remaining.auditsOf(result.id).find((a) => a.outcome === 'refused');
    expect((refusal?.denials as { reason: string }[])[0]?.reason).toBe('replayed-signature');
    expect(agent.prompt.reactCalls()).toHaveLength(reactCalls);
    const metrics = await scrape(target.httpUrl);
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

// The ledger's checks do not depend on the transport (the contract suite holds each to the same behaviour): the
// flood runs on one, native where its binding loads (it carries a flood several times faster than the WebSocket API).
const floodTransport = testTransports().includes('native') ? 'native' : testTransports()[0]!;
describe.each([floodTransport])('a flooded seen-signature ledger (real broker) [%s]', (kind) => {
  const { harness, replicas } = signedAgents(kind);

  it('a flood of 200 000 expired or far-ahead ledger records with valid MACs never lets a captured next run again, and each is counted', async () => {
    const first = capturingLogger();
    const agent = await harness(first);
    const second = await startReplica(agent, kind);
    replicas.push(second);
    // The replica that did not run the `next` knows its signature from the ledger only: flood that one.
    const { result, genuine, remaining: target } = await nextKnownFromTheLedger(agent, first, second);

    // Records a key holder wrote, with valid MACs: past their expiry (collected over a day), or (one in 20) expiring
    // further ahead than the age limit allows. Sent in batches until the replica has read 200 000 of them: the ledger
    // topic is non-persistent, and the broker drops some of a flood (as it would an attacker's).
    const keyHolder = new IterationSigner(SIGNING_KEY);
    const flooder = createTestTransport(kind, { webSocketUrl, serviceUrl, logger: capturingLogger().logger.child({ side: 'flooder' }) as Logger });
    const producer = await flooder.createProducer(queueToTopic(seenSignaturesQueue(agent.settings.id)));
    const refusedSoFar = async () => (await target.app.metrics.ledgerRefusals.get()).values.reduce((sum, v) => sum + v.value, 0);
    const FLOOD = 200_000;
    // Under the native producer's queue of pending sends.
    const BATCH = 900;
    let sent = 0;
    try {
      while ((await refusedSoFar()) < FLOOD) {
        const now = Date.now();
        await Promise.all(
          Array.from({ length: BATCH }, (_, i) => {
            const n = sent + i;
            const expiresAt = n % 20 === 19 ? now + keyHolder.maxAgeMs + 60_000 + n : now - 1_000 - n * 400;
            const signature = `collected-${n}`;
            const payload = Buffer.from(JSON.stringify({ signature, expires_at: expiresAt, replica: 'collected' }));
            return producer.send({ payload, properties: { 'tg-agent-seen-mac': keyHolder.signSeen(signature, expiresAt) } });
          }),
        );
        sent += BATCH;
        // Let the replica read the batch before the next: until it has counted every record sent, or counts no more.
        for (let last = -1, deadline = Date.now() + 5_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
          const counted = await refusedSoFar();
          if (counted >= sent || counted === last) break;
          last = counted;
        }
        if (sent > FLOOD * 2) throw new Error(`sent ${sent} records; the replica counted only ${await refusedSoFar()}`);
      }
    } finally {
      await flooder.close().catch(() => undefined);
    }
    const counted = async (reason: string) => sample(await scrape(target.httpUrl), 'tg_agent_ledger_records_refused_total', { processor: 'agent-manager', reason }) ?? 0;
    const expired = await counted('expired');
    const farAhead = await counted('not-yet-valid');
    expect(expired + farAhead).toBeGreaterThanOrEqual(FLOOD);
    expect(expired + farAhead).toBeLessThanOrEqual(sent);
    expect(farAhead).toBeGreaterThan(FLOOD / 25);
    // At most one warning a minute for all of them.
    expect(target.capture.lines.filter((line) => String(line.msg).startsWith('Refused seen-signature records')).length).toBeLessThanOrEqual(2);

    const reactCalls = agent.prompt.reactCalls().length;
    expect(await responsesToRefused(agent, target.capture.audits, genuine.value, genuine.properties)).toEqual([]);
    const refusal = target.capture.auditsOf(result.id).find((a) => a.outcome === 'refused');
    expect((refusal?.denials as { reason: string }[])[0]?.reason).toBe('replayed-signature');
    expect(agent.prompt.reactCalls()).toHaveLength(reactCalls);
  }, 600_000);

});
