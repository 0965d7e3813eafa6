/**
 * The worker side of a `WorkerClient`: answer each call with `handle`'s result (moving the buffers it lists
 * instead of copying them). An error `handle` throws answers that call as a failure of the worker.
 */
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import type { WorkerAnswer, WorkerCall, WorkerReady } from './worker-protocol.js';
import { InvalidUseError } from '../errors/index.js';

export interface Handled<Res> {
  readonly result: Res;
  readonly transfer?: readonly ArrayBuffer[];
}

/**
 * How much nicer a worker thread is than the thread that started it (Linux, where each thread has its own nice
 * value). A worker decodes large answers in the background while the event loop serves requests: when the two
 * compete for a core, the event loop gets about nine tenths of it (CFS weights 1024 : 110 at 0 and 10).
 */
export const WORKER_NICENESS = 10;

/** This thread's id on Linux (`/proc/thread-self` links to `<pid>/task/<tid>`), else undefined. */
export function currentThreadId(): number | undefined {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
    return Number.isInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}

function lowerThisThreadsPriority(): void {
  const tid = currentThreadId();
  // Without a thread id, setPriority would name the process, whose id is the event loop's thread.
  if (tid === undefined || tid === process.pid) return;
  try {
    setPriority(tid, Math.min(19, getPriority(tid) + WORKER_NICENESS));
  } catch {
    // Where the system refuses, the worker runs at the event loop's priority, as it did before.
  }
}

export function serveCalls<Req, Res>(handle: (request: Req) => Handled<Res>): void {
  const port = parentPort;
  if (!port) throw new InvalidUseError('serveCalls runs in a worker thread only');
  lowerThisThreadsPriority();
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
