// `npm run local` and `npm run ask` as a newcomer first types them: --help, a misspelt flag, a second stack.
// Each run stops before any broker is started.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'local-cli-'));
const run = (script: string, ...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', `scripts/${script}.ts`, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, TG_AGENT_LOCAL_DIR: dir, PULSAR_URL: 'ws://127.0.0.1:1' },
  });

describe('npm run local and npm run ask on the command line', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(['local', 'ask'])('%s --help prints the usage and starts nothing', (script) => {
    const help = run(script, '--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: npm run /);
    expect(help.stdout.split('\n').filter((line) => line.length > 100)).toEqual([]);
    expect(help.stdout).not.toContain('[local] starting');
  }, 60_000);

  it.each(['local', 'ask'])('%s refuses an unknown flag with exit 2, naming it', (script) => {
    const wrong = run(script, '--trasnport', 'websocket');
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toMatch(new RegExp(`^npm run ${script}: Unknown option '--trasnport'`));
    expect(wrong.stdout).not.toContain('[local] starting');
  }, 60_000);

  it('local refuses to start while another stack runs, and leaves its local.json alone', () => {
    const recorded = JSON.stringify({ backend: 'pulsar', webSocketUrl: 'ws://127.0.0.1:48080', pid: process.pid });
    writeFileSync(join(dir, 'local.json'), recorded);
    const second = run('local');
    expect(second.status).toBe(1);
    expect(second.stderr).toContain(`[local] another npm run local runs already (pid ${process.pid}`);
    expect(second.stdout).not.toContain('[local] starting');
    expect(readFileSync(join(dir, 'local.json'), 'utf8')).toBe(recorded);
  }, 60_000);
});
