/**
 * TrustGraph's own Python pieces (trustgraph-base / trustgraph-flow / trustgraph-cli 2.11.1 from PyPI) for
 * integration tests: the venv that scripts/trustgraph-venv.sh makes (cached; made on first use), and its
 * programs run as child processes against the test broker's binary-protocol URL.
 *
 * No venv is a failure, never a skip: tests that need these pieces throw with the script's own error.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const VENV_SCRIPT = join(REPO_ROOT, 'scripts', 'trustgraph-venv.sh');
/** The Python drivers that use TrustGraph's client code. */
export const TRUSTGRAPH_DRIVERS = join(REPO_ROOT, 'dev', 'trustgraph');

let venvPromise: Promise<string> | undefined;

/** The venv's directory; runs scripts/trustgraph-venv.sh once per test process (quick when cached). */
export function trustgraphVenv(): Promise<string> {
  venvPromise ??= (async () => {
    try {
      // pip's first install takes about a minute; later runs return at once.
      const { stdout } = await execFileAsync('bash', [VENV_SCRIPT], { timeout: 10 * 60_000, maxBuffer: 16 << 20 });
      const venv = stdout.trim().split('\n').at(-1) ?? '';
      if (venv === '') throw new Error(`${VENV_SCRIPT} printed no venv directory`);
      return venv;
    } catch (error) {
      const stderr = (error as { stderr?: string }).stderr ?? '';
      throw new Error(
        `TrustGraph's Python pieces are needed for this test and ${VENV_SCRIPT} could not make their venv:\n${stderr || String(error)}`,
        { cause: error },
      );
    }
  })();
  return venvPromise;
}

export interface PythonResult {
  stdout: string;
  stderr: string;
}

/** Run a program from the venv's bin/ and wait for it; rejects on a non-zero exit or after `timeoutMs`. */
export async function runCommand(command: string, args: readonly string[], timeoutMs = 60_000): Promise<PythonResult> {
  const venv = await trustgraphVenv();
  try {
    return await execFileAsync(join(venv, 'bin', command), args, {
      timeout: timeoutMs,
      maxBuffer: 64 << 20,
      env: { ...process.env, PYTHONUNBUFFERED: '1' },
    });
  } catch (error) {
    const { stdout = '', stderr = '', code } = error as { stdout?: string; stderr?: string; code?: unknown };
    throw new Error(`${command} ${args.join(' ')} failed (exit ${String(code)}):\n${stderr}\n${stdout}`, { cause: error });
  }
}

/** Run the venv's python on a driver under dev/trustgraph/ (see {@link runCommand}). */
export function runDriver(script: string, args: readonly string[], timeoutMs = 60_000): Promise<PythonResult> {
  return runCommand('python', [join(TRUSTGRAPH_DRIVERS, script), ...args], timeoutMs);
}

/**
 * A long-running TrustGraph program (a processor, the gateway): a console script of the venv, or a Python
 * file under dev/trustgraph/, run through dev/trustgraph/child.py, which ends it when this process's end of
 * its stdin closes (so a crashed test run leaves no TrustGraph processor retrying for ever).
 */
export interface TrustGraphProcess {
  readonly command: string;
  /** The Python process's pid (child.py runs the program in-process), for CPU readings from /proc. */
  readonly pid: number | undefined;
  /** stdout and stderr so far (TrustGraph logs to stderr). */
  output(): string;
  /** Resolves when `pattern` appears in the output; rejects if the process exits first or on timeout. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** SIGTERM, then SIGKILL after 5 s; resolves once it has exited. Safe to call twice. */
  stop(): Promise<void>;
}

export async function startTrustGraphProcess(command: string, args: readonly string[]): Promise<TrustGraphProcess> {
  const venv = await trustgraphVenv();
  const target = command.endsWith('.py') ? join(TRUSTGRAPH_DRIVERS, command) : command;
  const child: ChildProcess = spawn(join(venv, 'bin', 'python'), [join(TRUSTGRAPH_DRIVERS, 'child.py'), target, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
  });
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer): void => {
    output += chunk.toString('utf8');
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  let exited = false;
  const exit = new Promise<void>((resolveExit) => {
    child.once('exit', () => {
      exited = true;
      for (const listener of listeners) listener();
      resolveExit();
    });
    child.once('error', (error) => {
      output += `\n[spawn error] ${error.message}\n`;
      exited = true;
      for (const listener of listeners) listener();
      resolveExit();
    });
  });

  return {
    command,
    pid: child.pid,
    output: () => output,
    waitForOutput(pattern, timeoutMs = 60_000) {
      return new Promise<void>((resolveWait, rejectWait) => {
        const check = (): void => {
          if (pattern.test(output)) finish();
          else if (exited) finish(new Error(`${command} exited before printing ${String(pattern)}:\n${output}`));
        };
        const timer = setTimeout(
          () => finish(new Error(`${command} did not print ${String(pattern)} within ${timeoutMs} ms:\n${output}`)),
          timeoutMs,
        );
        const finish = (error?: Error): void => {
          clearTimeout(timer);
          listeners.delete(check);
          if (error) rejectWait(error);
          else resolveWait();
        };
        listeners.add(check);
        check();
      });
    },
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exit;
      clearTimeout(killer);
    },
  };
}
