/**
 * The worker side of a `WorkerClient`: answer each call with `handle`'s result (moving the buffers it lists
 * instead of copying them). An error `handle` throws answers that call as a failure of the worker.
 */
import { parentPort } from 'node:worker_threads';
import type { WorkerAnswer, WorkerCall, WorkerReady } from './worker-protocol.js';

export interface Handled<Res> {
  readonly result: Res;
  readonly transfer?: readonly ArrayBuffer[];
}

export function serveCalls<Req, Res>(handle: (request: Req) => Handled<Res>): void {
  const port = parentPort;
  if (!port) throw new Error('serveCalls runs in a worker thread only');
  port.on('message', ({ id, request }: WorkerCall<Req>) => {
    let answer: WorkerAnswer<Res>;
    let transfer: readonly ArrayBuffer[] = [];
    try {
      const handled = handle(request);
      answer = { id, ok: true, result: handled.result };
      transfer = handled.transfer ?? [];
    } catch (error) {
      answer = { id, ok: false, error: error instanceof Error ? error.message : String(error) };
    }
    port.postMessage(answer, [...transfer]);
  });
  const ready: WorkerReady = { ready: true };
  port.postMessage(ready);
}
