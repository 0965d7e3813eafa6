import { execFile } from 'node:child_process';
import { getPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkerFailedError } from '../../../src/threads/errors.js';
import { currentThreadId, WORKER_NICENESS } from '../../../src/threads/serve-calls.js';
import { WorkerClient } from '../../../src/threads/worker-client.js';

type Call = { echo: string } | { throw: string } | { exit: number } | { nice: true };
const entry = new URL('./fixtures/test-worker.ts', import.meta.url);
const clients: WorkerClient<Call, string>[] = [];

function client(): WorkerClient<Call, string> {
  const c = new WorkerClient<Call, string>(entry, 'test');
  clients.push(c);
  return c;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

describe('WorkerClient', () => {
  it('answers each call with its own result, in a worker thread', async () => {
    const c = client();
    expect(c.ready).toBe(false);
    const answers = await Promise.all(['a', 'b', 'c'].map((echo) => c.call({ echo })));
    expect(answers).toEqual(['echo: a (main thread: false)', 'echo: b (main thread: false)', 'echo: c (main thread: false)']);
    expect(c.ready).toBe(true);
  });

  it.skipIf(process.platform !== 'linux')('runs the worker nicer than the thread that started it, which keeps its own priority', async () => {
    const own = getPriority(currentThreadId());
    const c = client();
    expect(await c.call({ nice: true })).toBe(String(Math.min(19, own + WORKER_NICENESS)));
    expect(getPriority(currentThreadId())).toBe(own);
  });

  it('rejects a call whose handler throws, naming the worker and the error, and keeps serving', async () => {
    const c = client();
    const failed = c.call({ throw: 'no such thing' });
    await expect(failed).rejects.toBeInstanceOf(WorkerFailedError);
    await expect(failed).rejects.toThrow('the test worker failed: no such thing');
    await expect(c.call({ echo: 'after' })).resolves.toBe('echo: after (main thread: false)');
  });

  it('rejects every call in flight when the worker exits, and starts a new worker for the next call', async () => {
    const c = new WorkerClient<Call, string>(new URL('./fixtures/exit-on-call-worker.mjs', import.meta.url), 'test');
    clients.push(c);
    await c.start();
    expect(c.ready).toBe(true);
    const exiting = [c.call({ exit: 3 }), c.call({ echo: 'in flight' })];
    await expect(exiting[0]).rejects.toThrow('the test worker exited (code 7)');
    await expect(exiting[1]).rejects.toThrow('the test worker exited (code 7)');
    expect(c.ready).toBe(false);
    await expect(c.call({ echo: 'again' })).resolves.toBe('echo: again');
    expect(c.ready).toBe(true);
  });

  it('does not keep the process alive once its calls are answered', async () => {
    const script = fileURLToPath(new URL('./fixtures/exits-after-call.ts', import.meta.url));
    // The timeout only ends a process that would otherwise never exit.
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script], { timeout: 60_000 });
    expect(stdout.trim()).toBe('echo: done');
  }, 90_000);

  it('rejects a worker module that does not exist, and calls after close', async () => {
    const missing = new WorkerClient<Call, string>(new URL('./fixtures/no-such-worker.js', import.meta.url), 'missing');
    clients.push(missing);
    await expect(missing.call({ echo: 'x' })).rejects.toBeInstanceOf(WorkerFailedError);
    await expect(missing.start()).rejects.toBeInstanceOf(WorkerFailedError);
    const c = client();
    await c.close();
    await expect(c.call({ echo: 'x' })).rejects.toThrow('the test worker is closed');
  });
});
