/** Starting and stopping the brokers that tests and `npm run local` run as child processes. */
import type { ChildProcess } from 'node:child_process';
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

/** SIGTERM, and SIGKILL after `graceMs`; resolves once the process is gone. */
export async function ended(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
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
