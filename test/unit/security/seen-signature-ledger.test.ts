import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from 'pino';
import { MemoryTransport } from '../../../src/bus/memory-transport.js';
import { queueToTopic } from '../../../src/bus/topics.js';
import { IterationSigner, type RecordRefusal } from '../../../src/security/iteration-signature.js';
import { REFUSAL_LOG_INTERVAL_MS, SeenSignatureLedger, seenSignaturesQueue } from '../../../src/security/seen-signature-ledger.js';
import { capturingLogger } from '../../support/log-capture.js';
import { waitUntil } from '../../support/harness/wait-until.js';

const KEY = 'a-ledger-signing-key-0123456789';
const MAC = 'tg-agent-seen-mac';

describe('the seen-signature ledger', () => {
  const transport = new MemoryTransport();
  const controller = new AbortController();
  afterEach(() => controller.abort());

  async function ledger(clock: { now: number }) {
    const capture = capturingLogger();
    const refused: RecordRefusal[] = [];
    const signer = new IterationSigner(KEY, { now: () => clock.now });
    const processorId = `ledger-${Math.random().toString(36).slice(2)}`;
    const running = new SeenSignatureLedger({
      transport,
      signer,
      processorId,
      logger: capture.logger as Logger,
      telemetry: { ledgerRecordRefused: (reason) => void refused.push(reason) },
      signal: controller.signal,
      now: () => clock.now,
    });
    await running.start();
    return { running, signer, capture, refused, topic: queueToTopic(seenSignaturesQueue(processorId)) };
  }

  it('counts every refused record and logs at most one line per interval, with the counts since the last', async () => {
    const clock = { now: 1_700_000_000_000 };
    const { running, signer, capture, refused, topic } = await ledger(clock);
    const producer = await transport.createProducer(topic);
    const send = (record: object | string, mac: string) =>
      producer.send({ payload: Buffer.from(typeof record === 'string' ? record : JSON.stringify(record)), properties: { [MAC]: mac } });
    const live = clock.now + 60_000;
    for (let i = 0; i < 2_000; i++) await send({ signature: `s-${i}`, expires_at: live, replica: 'r' }, 'not-a-mac');
    await send({ signature: 'old', expires_at: clock.now - 1, replica: 'r' }, signer.signSeen('old', clock.now - 1));
    await send('not json', '');
    await waitUntil(() => refused.length === 2_002, 'every record to be read');
    expect(refused.filter((r) => r === 'forged')).toHaveLength(2_000);
    expect(refused.slice(-2)).toEqual(['expired', 'unreadable']);
    const warnings = () => capture.lines.filter((line) => String(line.msg).startsWith('Refused seen-signature records'));
    expect(warnings()).toHaveLength(1);

    clock.now += REFUSAL_LOG_INTERVAL_MS;
    await send({ signature: 'late', expires_at: clock.now + 60_000, replica: 'r' }, 'forged-again');
    await waitUntil(() => refused.length === 2_003, 'the last record to be read');
    expect(warnings()).toHaveLength(2);
    expect(warnings()[1]?.refused).toEqual({ forged: 2_000, expired: 1, unreadable: 1 });
    await running.stop();
  });
});
