/**
 * A stopping flow and its librarian saves, on the in-process bus with no librarian answering: the saves wait
 * their time, then the flow gives them up in one line, not one warning per document as its client closes.
 */
import { describe, expect, it } from 'vitest';
import { MemoryTransport } from '../../../src/bus/memory-transport.js';
import { RequestClient } from '../../../src/bus/request-client.js';
import { DocumentSaver, type DocumentSaveOutcome } from '../../../src/flow/document-saver.js';
import { librarianRequestCodec, librarianResponseCodec } from '../../../src/wire/index.js';
import { capturingLogger } from '../../support/log-capture.js';

describe('DocumentSaver when its flow stops', () => {
  it('waits for the saves in flight, then gives up the rest quietly and skips new ones', async () => {
    const bus = new MemoryTransport();
    const capture = capturingLogger('debug');
    const client = new RequestClient({
      transport: bus,
      requestTopic: 'non-persistent://tg/request/librarian:default',
      responseTopic: 'non-persistent://tg/response/librarian:default',
      requestCodec: librarianRequestCodec,
      responseCodec: librarianResponseCodec,
      timeoutMs: 60_000,
    });
    const outcomes: DocumentSaveOutcome[] = [];
    const saver = new DocumentSaver({ client, maxInFlight: 64, timeoutMs: 60_000, logger: capture.logger, onOutcome: (o) => outcomes.push(o) });
    for (let i = 0; i < 24; i++) expect(saver.save({ id: `urn:doc:${i}`, title: 't', content: 'c' })).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(saver.pending).toBe(24);

    expect(await saver.stop(100)).toBe(24);
    await client.close();
    const deadline = Date.now() + 5_000;
    while (outcomes.length < 24 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(outcomes).toEqual(Array.from({ length: 24 }, () => 'failed'));
    expect(capture.lines.filter((l) => String(l.msg).startsWith('Failed to save a librarian document'))).toEqual([]);
    expect(saver.save({ id: 'urn:doc:late', title: 't', content: 'c' })).toBe(false);
    expect(outcomes.at(-1)).toBe('skipped');
    await bus.close();
  });
});
