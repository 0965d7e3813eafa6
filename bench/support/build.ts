/**
 * Compiles the agent (src/) and the benchmark's child processes (agent probe, echo service) with the
 * project's own tsc and tsconfig into a private temporary directory, so the benchmark runs exactly the
 * current source as `node …/src/main.js` — the production entry point — without touching `dist/` (other
 * work in the same checkout may be building or using it).
 *
 * The directory gets a `package.json` (`"type": "module"`) and a `node_modules` symlink to the repo's, so
 * ESM resolution works as it does from `dist/`. `TG_BENCH_BUILD_DIR=<dir>` reuses (and keeps) a directory;
 * with `TG_BENCH_PREBUILT=1` as well, what is compiled there already is run as is (to compare an earlier build
 * with the current one in the same machine state).
 *
 * Experiment knob: `TG_BENCH_AGENT_DEFLATE=on|off` forces the WebSocket permessage-deflate extension on or
 * off in the agent's (and the echo's) build, whatever src/ says, to compare the two on the same machine.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface AgentBuild {
  readonly dir: string;
  /** `<dir>/dist/src/main.js` */
  readonly main: string;
  /** The `--import` preload that samples memory, CPU and event-loop delay inside the agent. */
  readonly probe: string;
  /** The floor's echo service. */
  readonly echo: string;
  /** The reload benchmark's config service. */
  readonly config: string;
  /** Seconds the compile took. */
  readonly seconds: number;
  remove(): void;
}

export async function buildAgent(log: (line: string) => void): Promise<AgentBuild> {
  const keep = process.env.TG_BENCH_BUILD_DIR;
  const dir = keep ? resolve(keep) : mkdtempSync(join(tmpdir(), 'tg-agent-bench-'));
  mkdirSync(dir, { recursive: true });
  const outDir = join(dir, 'dist');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'tg-agent-bench-build', private: true, type: 'module' }));
  if (!existsSync(join(dir, 'node_modules'))) symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const tsconfig = join(dir, 'tsconfig.json');
  writeFileSync(
    tsconfig,
    JSON.stringify(
      {
        extends: join(REPO_ROOT, 'tsconfig.json'),
        compilerOptions: { noEmit: false, outDir, rootDir: REPO_ROOT, sourceMap: false, incremental: false },
        include: [
          join(REPO_ROOT, 'src', '**', '*.ts'),
          join(REPO_ROOT, 'bench', 'support', 'agent-probe.ts'),
          join(REPO_ROOT, 'bench', 'support', 'echo-process.ts'),
          join(REPO_ROOT, 'bench', 'support', 'config-process.ts'),
        ],
      },
      null,
      2,
    ),
  );
  const started = performance.now();
  if (keep && process.env.TG_BENCH_PREBUILT === '1' && existsSync(join(outDir, 'src', 'main.js'))) log(`TG_BENCH_PREBUILT=1: running the build in ${outDir} as is`);
  else await compile(tsconfig, outDir, log);
  const seconds = (performance.now() - started) / 1000;
  forceDeflate(join(outDir, 'src', 'bus', 'websocket-transport.js'), log);
  return {
    dir,
    main: join(outDir, 'src', 'main.js'),
    probe: join(outDir, 'bench', 'support', 'agent-probe.js'),
    echo: join(outDir, 'bench', 'support', 'echo-process.js'),
    config: join(outDir, 'bench', 'support', 'config-process.js'),
    seconds,
    remove: () => {
      if (!keep) rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function compile(tsconfig: string, outDir: string, log: (line: string) => void): Promise<void> {
  log(`compiling src/ with tsc into ${outDir} ...`);
  try {
    await promisify(execFile)(process.execPath, [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', tsconfig], {
      cwd: REPO_ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    // tsc still emits on type errors (another engineer's work in progress); run that, but say so.
    const output = `${(error as { stdout?: string }).stdout ?? ''}${(error as { stderr?: string }).stderr ?? ''}`;
    if (!existsSync(join(outDir, 'src', 'main.js'))) throw new Error(`tsc failed to compile the agent for the benchmark:\n${output}`);
    log(`WARNING: tsc reported errors (the emitted JavaScript is used anyway):\n${output.split('\n').slice(0, 20).join('\n')}`);
  }
}

/** Rewrites the compiled `new WebSocket(url, {...})` call to force `perMessageDeflate` (TG_BENCH_AGENT_DEFLATE). */
function forceDeflate(file: string, log: (line: string) => void): void {
  const mode = process.env.TG_BENCH_AGENT_DEFLATE;
  if (mode !== 'on' && mode !== 'off') return;
  const source = readFileSync(file, 'utf8');
  const pattern = /new WebSocket\(this\.url, \{/;
  if (!pattern.test(source)) throw new Error(`TG_BENCH_AGENT_DEFLATE: no "new WebSocket(this.url, {" in ${file}`);
  // A later key wins in an object literal, so appending overrides any setting already in src/.
  const patched = source.replace(/(new WebSocket\(this\.url, \{[^}]*)\}/, `$1, perMessageDeflate: ${mode === 'on'} }`);
  writeFileSync(file, patched);
  log(`TG_BENCH_AGENT_DEFLATE=${mode}: the agent's WebSocket permessage-deflate is forced ${mode}`);
}
