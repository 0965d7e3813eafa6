/** Starting and stopping the brokers that tests and `npm run local` run as child processes. */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';

/** Resolves once something accepts TCP connections on 127.0.0.1:`port`; rejects if `child` exits first or time runs out. */
export async function untilListening(port: number, child: ChildProcess, what: string, timeoutMs: number, output: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}: ${output()}`);
    if (await accepts(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${what} did not listen on ${port} within ${timeoutMs / 1000} s: ${output()}`);
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

/**
 * Ends the process and resolves once it is gone: SIGTERM (a clean stop), then SIGKILL after `graceMs`; or
 * SIGKILL at once (a crash).
 */
export async function ended(child: ChildProcess, graceMs: number, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = signal === 'SIGTERM' ? setTimeout(() => child.kill('SIGKILL'), graceMs) : undefined;
  await exited;
  clearTimeout(timer);
}

/** The last `limit` characters a child wrote to stdout and stderr, for the error when it fails to start. */
export function tail(child: ChildProcess, limit = 4000): () => string {
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-limit);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => output;
}

/**
 * A broker node run as a child process: started, and killed and started again on the same ports and data
 * (the broker faults of `npm run bench:faults`).
 */
export class NodeProcess {
  private child: ChildProcess | undefined;

  constructor(
    private readonly spawnNode: () => ChildProcess,
    private readonly port: number,
    private readonly what: string,
    private readonly startTimeoutMs: number,
  ) {}

  /** Starts the node; resolves once it listens on its port. */
  async start(): Promise<void> {
    const started = this.spawnNode();
    this.child = started;
    if (started.pid !== undefined) endWithThisProcess(started.pid);
    await untilListening(this.port, started, this.what, this.startTimeoutMs, tail(started));
  }

  /** The node's process id while it runs. */
  get pid(): number | undefined {
    const child = this.child;
    return child && child.exitCode === null && child.signalCode === null ? child.pid : undefined;
  }

  /** SIGTERM: a clean stop (SIGKILL after 30 s); SIGKILL: a crash. */
  async kill(signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    if (this.child) await ended(this.child, 30_000, signal);
  }
}

/**
 * Kills `pid` once this process is gone, should it go without stopping it (a test run killed midway, a worker
 * that died): a detached shell that checks both every second. No broker outlives the run that started it.
 */
function endWithThisProcess(pid: number): void {
  const script = `while kill -0 ${process.pid} 2>/dev/null && kill -0 ${pid} 2>/dev/null; do sleep 1; done; kill -KILL ${pid} 2>/dev/null; true`;
  spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' }).unref();
}
