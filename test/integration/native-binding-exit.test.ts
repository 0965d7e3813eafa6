/**
 * How a process that uses the native binding ends, checked in child processes: the binding's C++ threads keep
 * running and logging while Node tears the process down, and how the build's patch (scripts/native-patches/)
 * hands their log lines and settlements to JS decides whether that ends in exit code 0 or in an abort.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { brokerUrls } from '../support/transport-contract.js';
import { testTransports } from '../support/transports.js';

const { serviceUrl } = brokerUrls();

/** Runs `body` (CommonJS, with `Client`, `serviceUrl`, `topic` in scope) in a child; resolves with its stdout lines. */
async function runChild(body: string): Promise<string[]> {
  const script = `
    const { Client } = require('pulsar-client');
    const [serviceUrl, topic] = process.argv.slice(1);
    (async () => { ${body} })().catch((err) => { console.error(err); process.exit(2); });
  `;
  const topic = `non-persistent://public/default/exit-${randomUUID()}`;
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', script, serviceUrl, topic], { timeout: 30_000 });
  return stdout.trim().split('\n');
}

describe.runIf(testTransports().includes('native'))('a process using the native binding', () => {
  it('stays alive until a pending send is acknowledged, then exits by itself', async () => {
    // Only a producer: between send() and its receipt the pending promise alone keeps the event loop alive
    // (the binding's C++ threads do not). If it did not, the child would exit before "sent".
    const lines = await runChild(`
      const client = new Client({ serviceUrl, log: () => undefined });
      const producer = await client.createProducer({ topic, batchingEnabled: false });
      await producer.send({ data: Buffer.from('x') });
      console.log('sent');
      await producer.close();
      await client.close();
      console.log('closed');
    `);
    expect(lines).toEqual(['sent', 'closed']);
  });

  it('exits with code 0 while libpulsar is still logging to the JS log function', async () => {
    // At debug level the client's threads log on every send and receipt, so lines are still on their way to
    // the log function while Node tears the process down. The binding as published aborted here every time
    // ("terminate called after throwing an instance of 'Napi::Error'", or a silent abort from a freed
    // thread-safe function); so it did, now and then, at info level after client.close() (a CI run saw it).
    for (let run = 0; run < 5; run++) {
      const lines = await runChild(`
        let logged = 0;
        const client = new Client({ serviceUrl, log: () => { logged++; }, logLevel: 0 });
        const producer = await client.createProducer({ topic, batchingEnabled: false });
        await Promise.all(Array.from({ length: 200 }, () => producer.send({ data: Buffer.from('x') })));
        console.log(logged > 0 ? 'sent, and log lines reached the log function' : 'sent, but no log line arrived');
        // The client is left open on purpose: its threads are still at work when the process ends.
      `);
      expect(lines, `run ${run + 1} of 5`).toEqual(['sent, and log lines reached the log function']);
    }
  });

  it('hands the log lines of every client to the newest log function, and exits with code 0 after closing them', async () => {
    // libpulsar has one logger per process: a second client's log function replaces the first one's while the
    // first client's threads are logging.
    const lines = await runChild(`
      const counts = { first: 0, second: 0 };
      const first = new Client({ serviceUrl, log: () => { counts.first++; }, logLevel: 0 });
      const firstProducer = await first.createProducer({ topic, batchingEnabled: false });
      const sending = Promise.all(Array.from({ length: 200 }, () => firstProducer.send({ data: Buffer.from('x') })));
      const second = new Client({ serviceUrl, log: () => { counts.second++; }, logLevel: 0 });
      await sending;
      const before = counts.second;
      await firstProducer.send({ data: Buffer.from('y') });
      await new Promise((resolve) => setTimeout(resolve, 200));
      console.log(counts.first > 0 ? 'the first function got lines' : 'the first function got none');
      console.log(counts.second > before ? 'lines logged later reach the second function' : 'lines logged later were lost');
      await firstProducer.close();
      await first.close();
      await second.close();
      console.log('closed');
    `);
    expect(lines).toEqual(['the first function got lines', 'lines logged later reach the second function', 'closed']);
  });
});
