/**
 * `yes > /dev/null` beside a benchmark: a busy loop taking a core's worth of CPU, the way other jobs load a CI
 * runner. The caller stops it; if the benchmark dies first, the loop goes with it (it is this process's child
 * and is killed on exit).
 */
import { spawn } from 'node:child_process';

export function startBusyLoop(): { pid: number; stop(): void } {
  const child = spawn('yes', [], { stdio: ['ignore', 'ignore', 'ignore'] });
  if (child.pid === undefined) throw new Error('--busy: could not start `yes`');
  const kill = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.once('exit', kill);
  return {
    pid: child.pid,
    stop: () => {
      process.off('exit', kill);
      kill();
    },
  };
}
