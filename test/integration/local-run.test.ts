/**
 * `npm run local` then `npm run ask`, as the README's quick start says, against the test run's broker
 * (PULSAR_URL), with the scripted model, on every transport that loads here (`npm run local -- --transport`;
 * `npm run ask` takes the same one from the state file local writes). A failure prints what `local` printed,
 * each `ask`'s output and the end of the agent's log.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { waitUntil } from '../support/agent-harness.js';
import { elapsed, explained } from '../support/failure-report.js';
import { testTransports } from '../support/transports.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface AskRun {
  args: string[];
  code: number | string | null;
  stdout: string;
  stderr: string;
}

/** `npm run ask -- …args`; resolves with its output whatever its exit (the test judges the output). */
function ask(env: NodeJS.ProcessEnv, args: string[], runs: AskRun[]): Promise<AskRun> {
  return new Promise((resolve) => {
    execFile('npm', ['run', '--silent', 'ask', '--', ...args], { cwd: ROOT, env, timeout: 60_000 }, (error, stdout, stderr) => {
      const run: AskRun = { args, code: error ? ((error as { code?: number | string }).code ?? error.message) : 0, stdout, stderr };
      runs.push(run);
      resolve(run);
    });
  });
}

describe.each(testTransports())('npm run local + npm run ask [%s]', (kind) => {
  it('answers a question through the spec workflow and stops cleanly', async () => {
    // Port 0: the agent takes any free port and `npm run local` learns which, so runs side by side never meet
    // on 8000 (one agent failing to listen, or one run's readiness check answered by another run's agent).
    // A directory of its own for local.json and the agent's log: runs side by side never read each other's.
    const dir = mkdtempSync(join(tmpdir(), 'tg-local-run-'));
    const AGENT_LOG = join(dir, 'local-agent.log');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TG_AGENT_LOCAL_DIR: dir,
      PULSAR_URL: inject('pulsarWebSocketUrl'),
      PULSAR_SERVICE_URL: inject('pulsarServiceUrl'),
      TG_AGENT_METRICS_PORT: '0',
    };
    delete env.LLM_URL;
    const local = spawn('npm', ['run', '--silent', 'local', '--', '--transport', kind], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    const exited: string[] = [];
    local.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    local.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    local.on('exit', (code, signal) => exited.push(`${elapsed()} npm run local exited: code ${code}, signal ${signal}`));
    const runs: AskRun[] = [];
    const report = (): Record<string, readonly string[]> => ({
      'npm run local printed': [...output.split('\n'), ...exited],
      ...Object.fromEntries(runs.map((r, i) => [`ask ${i + 1} (${r.args[0]}), exit ${r.code}`, [...r.stdout.split('\n'), ...r.stderr.split('\n')]])),
      'the agent log, last 40 lines': existsSync(AGENT_LOG) ? readFileSync(AGENT_LOG, 'utf8').trimEnd().split('\n').slice(-40) : ['(none)'],
    });

    await explained(async () => {
      try {
        await waitUntil(() => output.includes('agent ready') || local.exitCode !== null, 'npm run local to be ready', 60_000);
        expect(output).toContain('agent ready');
        expect(output).toContain(`transport: ${kind} (agent and stand-ins)`);

        const first = await ask(env, ['What entities are connected to Company X?', '--group', 'read-only', '--state', 'undefined'], runs);
        expect(first.stdout).toMatch(new RegExp(`^asking \\S+ over ${kind} \\(workspace`));
        expect(first.stdout).toContain('thought    > (scripted model) I should look in the knowledge graph first');
        expect(first.stdout).toContain('observation> Company X is connected to Acme Corp');
        expect(first.stdout).toContain('answer     > Here is what I found:\n- Knowledge Graph Query: Company X is connected to Acme Corp');
        expect(first.code).toBe(0);
        await waitUntil(() => output.includes('state undefined → analysis'), 'the audit summary of the transition', 10_000);

        // The same workflow as a plan: each step's tool checked against the state the earlier steps move to.
        const planned = await ask(
          env,
          ['Analyse Company X', '--group', 'read-only,advanced,compute,admin', '--state', 'undefined', '--pattern', 'plan-then-execute'],
          runs,
        );
        expect(planned.stdout).toContain('thought    > Created plan with 3 steps');
        expect(planned.stdout).toContain('calling Complex Analysis Tool');
        expect(planned.stdout).toContain('answer     > (scripted model) From the plan:');
        expect(planned.code).toBe(0);

        // And as a supervisor (the README's `--pattern supervisor`): two subagents, then one synthesis.
        const supervised = await ask(env, ['Analyse Company X', '--group', 'read-only,advanced,compute,admin', '--state', 'undefined', '--pattern', 'supervisor'], runs);
        expect(supervised.stdout).toContain('thought    > Decomposed into 2 sub-goals');
        // Each subagent's lines say whose they are; the supervisor's own carry no label.
        expect(supervised.stdout).toMatch(/^\[subagent 1\] thought {4}> /m);
        expect(supervised.stdout).toMatch(/^\[subagent 2\] thought {4}> /m);
        expect(supervised.stdout).toContain('answer     > (scripted model) From the subagents:');
        expect(supervised.code).toBe(0);

        // `--why`: the README's example of a hidden tool, from the running agent's listing.
        const why = await ask(env, ['--why', 'Complex Analysis Tool', '--group', 'read-only', '--state', 'undefined'], runs);
        expect(why.stdout).toBe(
          '"Complex Analysis Tool" is not offered to a request with groups read-only, state undefined:\n' +
            '  - not in these groups: it needs one of "advanced", "compute", "expensive"\n' +
            '  - not available in state "undefined": it is available in "analysis"\n',
        );
        expect(why.code).toBe(1);
        const offered = await ask(env, ['--why', 'Complex Analysis Tool', '--group', 'compute', '--state', 'analysis'], runs);
        expect(offered.stdout).toBe('"Complex Analysis Tool" is offered to a request with groups compute, state analysis\n');
        expect(offered.code).toBe(0);
      } finally {
        // If local ended by itself, its group is gone (ESRCH): the check below then fails showing its output.
        try {
          process.kill(-local.pid!, 'SIGINT');
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
        }
        if (local.exitCode === null && local.signalCode === null) await once(local, 'exit');
      }
      expect(output).toContain('[local] stopping');
      expect(output.trimEnd().split('\n').at(-1)).toBe('[local] everything stopped.');
      expect(existsSync(join(dir, 'local.json'))).toBe(false);
    }, report);
    rmSync(dir, { recursive: true, force: true });
  }, 120_000);
});
