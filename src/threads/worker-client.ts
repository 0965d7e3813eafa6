/**
 * One long-lived worker thread that answers requests, for work too big to do on the event loop in one piece
 * (decoding a config answer of 10 000 tools takes tens of milliseconds; requests would wait that long).
 *
 * The worker starts on the first call (or `start()`) and never keeps the process alive on its own; `ready`
 * says whether it has loaded, so a caller in a hurry can do the work itself meanwhile. If it fails (throws,
 * exits, cannot start), every call in flight rejects with a `WorkerFailedError` and the next call starts a
 * new one. What the worker's handler reports as an answer, failures of the input included, is the caller's
 * to interpret: a thrown error in the handler counts as a failure of the worker.
 */
import { Worker } from 'node:worker_threads';
import { WorkerFailedError } from './errors.js';
import type { WorkerAnswer, WorkerCall, WorkerReady } from './worker-protocol.js';


interface Pending<Res> {
  resolve(result: Res): void;
  reject(error: Error): void;
}

export class WorkerClient<Req, Res> {
  private worker: Worker | undefined;
  private loaded: Promise<void> | undefined;
  private isReady = false;
  private readonly pending = new Map<number, Pending<Res>>();
  private nextId = 1;
  private closed = false;

  /**
   * @param entry the worker's module (a `.js` file; from TypeScript sources under tsx or vitest, the `.ts`
   *   file is loaded through tsx)
   * @param label names the worker in errors
   */
  constructor(
    private readonly entry: URL,
    private readonly label: string,
  ) {}

  /** The worker has loaded its module and answers calls without a start-up wait. */
  get ready(): boolean {
    return this.isReady;
  }

  /** Start the worker if it is not running; resolves once it is ready, rejects if it fails first. */
  start(): Promise<void> {
    if (this.closed) return Promise.reject(new WorkerFailedError(`the ${this.label} worker is closed`));
    if (!this.worker) {
      try {
        this.spawnWorker();
      } catch (error) {
        return Promise.reject(new WorkerFailedError(`the ${this.label} worker could not start: ${String(error)}`, { cause: error }));
      }
    }
    return this.loaded!;
  }

  /** Send `request` (the `transfer` list moves those buffers instead of copying them) and await the answer. */
  call(request: Req, transfer: readonly ArrayBuffer[] = []): Promise<Res> {
    if (this.closed) return Promise.reject(new WorkerFailedError(`the ${this.label} worker is closed`));
    let worker: Worker;
    try {
      worker = this.worker ?? this.spawnWorker();
    } catch (error) {
      return Promise.reject(new WorkerFailedError(`the ${this.label} worker could not start: ${String(error)}`, { cause: error }));
    }
    const id = this.nextId++;
    return new Promise<Res>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref();
      const call: WorkerCall<Req> = { id, request };
      worker.postMessage(call, [...transfer]);
    });
  }

  /** Stop the worker; calls in flight reject. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.fail(new WorkerFailedError(`the ${this.label} worker was closed`));
    await worker?.terminate();
  }

  private spawnWorker(): Worker {
    const worker = spawn(this.entry);
    worker.unref();
    let loaded: () => void = () => {};
    let failed: (error: Error) => void = () => {};
    this.loaded = new Promise<void>((resolve, reject) => {
      loaded = resolve;
      failed = reject;
    });
    // Nobody may be waiting for the start: its failure reaches the calls instead.
    this.loaded.catch(() => {});
    this.failLoad = failed;
    worker.on('message', (answer: WorkerAnswer<Res> | WorkerReady) => {
      if ('ready' in answer) {
        if (this.worker === worker) this.isReady = true;
        loaded();
        return;
      }
      const pending = this.pending.get(answer.id);
      if (!pending) return;
      this.pending.delete(answer.id);
      if (this.pending.size === 0) worker.unref();
      if (answer.ok) pending.resolve(answer.result);
      else pending.reject(new WorkerFailedError(`the ${this.label} worker failed: ${answer.error}`));
    });
    worker.on('error', (error) => {
      if (this.worker === worker) this.fail(new WorkerFailedError(`the ${this.label} worker failed: ${error.message}`, { cause: error }));
    });
    worker.on('exit', (code) => {
      if (this.worker === worker) this.fail(new WorkerFailedError(`the ${this.label} worker exited (code ${code})`));
    });
    this.worker = worker;
    return worker;
  }

  private failLoad: (error: Error) => void = () => {};

  private fail(error: WorkerFailedError): void {
    this.worker = undefined;
    this.isReady = false;
    this.failLoad(error);
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(error);
  }
}

/** A worker on `entry`: as is for JavaScript; for a TypeScript source, through tsx (development and tests). */
function spawn(entry: URL): Worker {
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry);
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(boot, { eval: true });
}

/** `./<name>.js` next to `base` (a module's `import.meta.url`), or `./<name>.ts` when `base` is TypeScript source. */
export function siblingModule(base: string, name: string): URL {
  return new URL(`./${name}${base.endsWith('.ts') ? '.ts' : '.js'}`, base);
}
