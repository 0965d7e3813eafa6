/**
 * A Docker engine for the image and compose tests: whether one answers, and the tg-agent image built for this
 * run. `.ci/run` starts an engine of its own (scripts/image/dockerd.sh) and exports DOCKER_HOST; under `CI=true`
 * no engine is an error, elsewhere the Docker tests are skipped, saying why.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

// testcontainers' resource reaper is an image from Docker Hub, which a machine without a registry cannot pull;
// these tests stop and remove their containers themselves.
process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';

/** Why no Docker engine can be used here, or undefined when one answers. Throws under CI=true. */
export async function dockerUnavailable(): Promise<string | undefined> {
  let reason: string | undefined;
  try {
    await run('docker', ['version', '--format', '{{.Server.Version}}'], { timeout: 10_000 });
  } catch (error) {
    reason = `no Docker engine answers (docker version: ${(error as Error).message.split('\n')[0]})`;
  }
  if (reason && process.env.CI === 'true') {
    throw new Error(`CI=true: the image and compose tests must run, but ${reason}; start one with scripts/image/dockerd.sh`);
  }
  return reason;
}

/** Builds (or takes from Docker's cache) the tg-agent image with scripts/image/build.sh; returns its tag. */
export async function builtImage(): Promise<string> {
  const { stdout, stderr } = await run('bash', ['scripts/image/build.sh'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  const tag = stdout.trim().split('\n').at(-1) ?? '';
  if (tag === '') throw new Error(`scripts/image/build.sh printed no tag:\n${stderr}`);
  return tag;
}

/** `docker <args>`, its stdout; rejects with stderr in the message. */
export async function docker(args: readonly string[], timeoutMs = 60_000): Promise<string> {
  try {
    return (await run('docker', [...args], { cwd: ROOT, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 })).stdout;
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(`docker ${args.join(' ')} failed: ${stderr?.trim() || (error as Error).message}`, { cause: error });
  }
}
