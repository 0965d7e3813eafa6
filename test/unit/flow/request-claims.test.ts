import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryTransport } from '../../../src/bus/memory/memory-transport.js';
import { RecentRequests } from '../../../src/flow/recent-requests.js';
import { claimsTopic, RequestClaims } from '../../../src/flow/request-claims.js';
import { capturingLogger } from '../../support/log-capture.js';

const TOPIC = claimsTopic('tg', 'agent-manager');
const KEY = RecentRequests.keyOf('c1', Buffer.from('{"question":"a"}'));

describe('asking the other replicas whether one took a request delivered again', () => {
  let bus: MemoryTransport;
  const started: RequestClaims[] = [];

  afterEach(async () => {
    await Promise.all(started.splice(0).map((c) => c.stop()));
    await bus.close();
  });

  async function replica(name: string, waitMs = 3000, logger = pino({ level: 'silent' })): Promise<{ claims: RequestClaims; recent: RecentRequests }> {
    const recent = new RecentRequests();
    const claims = new RequestClaims({ transport: bus, recent, topic: TOPIC, logger, waitMs, replica: name });
    await claims.start();
    started.push(claims);
    return { claims, recent };
  }

  it('names the replica that runs the request', async () => {
    bus = new MemoryTransport();
    const a = await replica('A');
    const b = await replica('B');
    a.recent.begin(KEY);
    await expect(b.claims.holderOf(KEY)).resolves.toBe('A');
  });

  it('names the replica that ended it lately, but not one that gave it back to the broker', async () => {
    bus = new MemoryTransport();
    const a = await replica('A');
    const b = await replica('B', 300);
    const other = RecentRequests.keyOf('c2', Buffer.from('{"question":"b"}'));
    a.recent.begin(KEY);
    a.recent.end(KEY, true);
    a.recent.begin(other);
    a.recent.end(other, false);
    await expect(b.claims.holderOf(KEY)).resolves.toBe('A');
    await expect(b.claims.holderOf(other)).resolves.toBeUndefined();
  });

  it('ends the wait with no holder when no other replica has it, and never answers its own ask', async () => {
    bus = new MemoryTransport();
    const b = await replica('B', 400);
    await replica('C', 400);
    // B's own memory is not the question (the flow asks it first): its own ask on the topic is not answered by itself.
    b.recent.begin(KEY);
    const asked = Date.now();
    await expect(b.claims.holderOf(KEY)).resolves.toBeUndefined();
    expect(Date.now() - asked).toBeGreaterThanOrEqual(350);
  });

  it('asks again during the wait, so a replica that subscribes late (reconnecting after the same fault) still answers', async () => {
    bus = new MemoryTransport();
    const b = await replica('B', 3000);
    const answer = b.claims.holderOf(KEY);
    await new Promise((resolve) => setTimeout(resolve, 1300));
    const a = await replica('A');
    a.recent.begin(KEY);
    await expect(answer).resolves.toBe('A');
  });

  it('answers no one before it has started, and ignores what is neither an ask nor an answer', async () => {
    bus = new MemoryTransport();
    const idle = new RequestClaims({ transport: bus, recent: new RecentRequests(), topic: TOPIC, logger: pino({ level: 'silent' }) });
    await expect(idle.holderOf(KEY)).resolves.toBeUndefined();

    const capture = capturingLogger();
    const a = await replica('A', 3000, capture.logger);
    const b = await replica('B');
    a.recent.begin(KEY);
    const junk = await bus.createProducer(TOPIC);
    await junk.send({ payload: Buffer.from('{"what":1}'), properties: { from: 'X' } });
    await junk.send({ payload: Buffer.from('not json'), properties: { from: 'X' } });
    await expect(b.claims.holderOf(KEY)).resolves.toBe('A');
    expect(capture.lines.filter((l) => String(l.msg).startsWith('A message on the request claims topic is neither'))).toHaveLength(2);
  });

  it('ends a wait at once when it stops', async () => {
    bus = new MemoryTransport();
    // A wait far longer than the test's timeout: only the stop can end it in time.
    const b = await replica('B', 600_000);
    const answer = b.claims.holderOf(KEY);
    await b.claims.stop();
    await expect(answer).resolves.toBeUndefined();
  });
});
