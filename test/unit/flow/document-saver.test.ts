/**
 * A stopping flow and its librarian saves, on the in-process bus with no librarian answering: the saves wait
 * their time, then the flow gives them up in one line, not one warning per document as its client closes.
 */
import { describe, expect, it, vi } from 'vitest';
import { MemoryTransport } from '../../../src/bus/memory/memory-transport.js';
import { RequestClient } from '../../../src/bus/request-client.js';
import { DocumentSaver, type DocumentSaveOutcome } from '../../../src/flow/document-saver.js';
import { librarianRequestCodec, librarianResponseCodec } from '../../../src/wire/index.js';
import { capturingLogger } from '../../support/log-capture.js';

/** A client of the librarian's queues, on the in-process bus. */
function librarianClient(bus: MemoryTransport) {
  return new RequestClient({
    transport: bus,
    requestTopic: 'non-persistent://tg/request/librarian:default',
    responseTopic: 'non-persistent://tg/response/librarian:default',
    requestCodec: librarianRequestCodec,
    responseCodec: librarianResponseCodec,
    timeoutMs: 60_000,
  });
}

/** Waits, turn by turn of the event loop (no timers: they are fake here), until `done` holds. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setImmediate(resolve));
}

describe('DocumentSaver when its flow stops', () => {
  it('waits for the saves in flight, then gives up the rest quietly and skips new ones', async () => {
    // A fake clock: the stop's 100 ms grace passes when the test says, however busy the machine is.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const bus = new MemoryTransport();
    try {
      const capture = capturingLogger('debug');
      const requests: unknown[] = [];
      await bus.subscribe({
        topic: 'non-persistent://tg/request/librarian:default',
        subscription: 'silent-librarian',
        subscriptionType: 'Shared',
        handler: async (m) => {
          requests.push(m);
          await m.ack();
        },
      });
      const client = librarianClient(bus);
      const outcomes: DocumentSaveOutcome[] = [];
      const saver = new DocumentSaver({ client, maxInFlight: 64, timeoutMs: 60_000, logger: capture.logger, onOutcome: (o) => outcomes.push(o) });
      for (let i = 0; i < 24; i++) expect(saver.save({ id: `urn:doc:${i}`, title: 't', content: 'c' })).toBe(`urn:doc:${i}`);
      // Every save is on the bus, and none is answered (the librarian is silent).
      await until(() => requests.length === 24);
      expect(saver.pending).toBe(24);

      const stopped = saver.stop(100);
      await vi.advanceTimersByTimeAsync(99);
      expect(outcomes).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      expect(await stopped).toBe(24);
      await client.close();
      await until(() => outcomes.length === 24);
      expect(outcomes).toEqual(Array.from({ length: 24 }, () => 'failed'));
      expect(capture.lines.filter((l) => String(l.msg).startsWith('Failed to save a librarian document'))).toEqual([]);
      expect(saver.save({ id: 'urn:doc:late', title: 't', content: 'c' })).toBeUndefined();
      expect(outcomes.at(-1)).toBe('skipped');
    } finally {
      vi.useRealTimers();
      await bus.close();
    }
  });
});

describe('DocumentSaver with every slot taken', () => {
  it('warns of the first skipped document at once, then at most every 10 s with how many were skipped', async () => {
    const bus = new MemoryTransport();
    try {
      const capture = capturingLogger('debug');
      const client = librarianClient(bus);
      let now = 1_000_000;
      const outcomes: DocumentSaveOutcome[] = [];
      const saver = new DocumentSaver({ client, maxInFlight: 2, timeoutMs: 60_000, logger: capture.logger, onOutcome: (o) => outcomes.push(o) }, () => now);
      const doc = (i: number) => ({ id: `urn:doc:${i}`, title: 't', content: 'c' });
      saver.save(doc(0));
      saver.save(doc(1));
      const skipWarnings = () => capture.lines.filter((l) => String(l.msg).startsWith('Not saving'));
      for (let i = 2; i < 7; i++) expect(saver.save(doc(i))).toBeUndefined();
      expect(skipWarnings().map((l) => l.skipped)).toEqual([1]);
      now += 9_999;
      saver.save(doc(7));
      expect(skipWarnings()).toHaveLength(1);
      now += 1;
      saver.save(doc(8));
      expect(skipWarnings().map((l) => l.skipped)).toEqual([1, 6]);
      expect(String(skipWarnings()[1]?.msg)).toMatch(/^Not saving 6 librarian documents: 2 saves are already waiting/);
      expect(outcomes.filter((o) => o === 'skipped')).toHaveLength(7);
      await saver.stop(0);
      await client.close();
    } finally {
      await bus.close();
    }
  });
});
