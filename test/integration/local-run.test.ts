/**
 * `npm run local` then `npm run ask`, as the README's quick start says, against the test run's broker
 * (PULSAR_URL), with the scripted model, on every transport that loads here (`npm run local -- --transport`;
 * `npm run ask` takes the same one from the state file local writes).
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { waitUntil } from '../support/agent-harness.js';
import { testTransports } from '../support/transports.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe.each(testTransports())('npm run local + npm run ask [%s]', (kind) => {
  it('answers a question through the spec workflow and stops cleanly', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, PULSAR_URL: inject('pulsarWebSocketUrl'), PULSAR_SERVICE_URL: inject('pulsarServiceUrl') };
    delete env.LLM_URL;
    const local = spawn('npm', ['run', '--silent', 'local', '--', '--transport', kind], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    local.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    local.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    try {
      await waitUntil(() => output.includes('agent ready') || local.exitCode !== null, 'npm run local to be ready', 60_000);
      expect(output).toContain('agent ready');
      expect(output).toContain(`transport: ${kind} (agent and stand-ins)`);

      const { stdout } = await promisify(execFile)(
        'npm',
        ['run', '--silent', 'ask', '--', 'What entities are connected to Company X?', '--group', 'read-only', '--state', 'undefined'],
        { cwd: ROOT, env, timeout: 60_000 },
      );
      expect(stdout).toContain('thought    > (scripted model) I should look in the knowledge graph first');
      expect(stdout).toContain('observation> Company X is connected to Acme Corp');
      expect(stdout).toContain('answer     > Here is what I found:\n- Knowledge Graph Query: Company X is connected to Acme Corp');
      await waitUntil(() => output.includes('state undefined → analysis'), 'the audit summary of the transition', 10_000);

      // The same workflow as a plan: each step's tool checked against the state the earlier steps move to.
      const planned = await promisify(execFile)(
        'npm',
        ['run', '--silent', 'ask', '--', 'Analyse Company X', '--group', 'read-only,advanced,compute,admin', '--state', 'undefined', '--pattern', 'plan-then-execute'],
        { cwd: ROOT, env, timeout: 60_000 },
      );
      expect(planned.stdout).toContain('thought    > Created plan with 3 steps');
      expect(planned.stdout).toContain('calling Complex Analysis Tool');
      expect(planned.stdout).toContain('answer     > (scripted model) From the plan:');
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
  }, 120_000);
});
