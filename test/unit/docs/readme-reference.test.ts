/**
 * The configuration and metrics references (docs/configuration.md, docs/metrics.md) against the code: every option of src/settings.ts has its
 * row (same flag, short flag and environment variable) and every row an option; every metric the agent
 * registers has its row (same type) and every row a metric. A new option or metric without its documentation,
 * or a row left behind, fails here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AgentMetrics } from '../../../src/observability/metrics.js';
import { OPTIONS } from '../../../src/settings.js';

const docLines = (name: string): string[] => readFileSync(new URL(`../../../docs/${name}`, import.meta.url), 'utf8').split('\n');

/** The table rows of the section of docs/`file` that starts with `heading`, up to the next `## ` heading. */
function sectionRows(file: string, heading: string): string[][] {
  const lines = docLines(file);
  const start = lines.indexOf(heading);
  expect(start, `docs/${file} section ${heading}`).toBeGreaterThanOrEqual(0);
  const end = lines.findIndex((line, i) => i > start && line.startsWith('## '));
  return lines
    .slice(start, end === -1 ? undefined : end)
    .filter((line) => line.startsWith('| `'))
    .map((line) => line.split(' | ').map((cell) => cell.replace(/^\| /, '').trim()));
}

const code = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

describe('the configuration and metrics references', () => {
  it('lists every option with its flag, short flag and environment variable, and nothing else', () => {
    const rows = sectionRows('configuration.md', '## Configuration reference').filter((row) => row[0]!.startsWith('`--'));
    // A boolean's `--no-` form is documented beside it where it matters; it is not an option of its own.
    const documented = rows.map((row) => ({ flags: code(row[0]!).filter((f) => !f.startsWith('--no-')).sort(), env: code(row[1]!)[0] }));
    expect(documented.length).toBeGreaterThan(30);
    const options = OPTIONS.map((o) => ({ flags: [`--${o.flag}`, ...(o.short ? [`-${o.short}`] : [])].sort(), env: o.env }));
    const key = (o: { flags: string[]; env: string | undefined }) => `${o.flags.join(' ')} ${o.env ?? '—'}`;
    expect(documented.map(key).sort()).toEqual(options.map(key).sort());
  });

  it('lists every metric the agent registers with its type, and nothing else', async () => {
    const metrics = new AgentMetrics('agent-manager', { defaultMetrics: false });
    const registered = (await metrics.registry.getMetricsAsJSON()).map((m) => `${m.name} ${String(m.type)}`);
    const rows = sectionRows('metrics.md', '## Metrics reference').filter((row) => /^`[a-z_]+`$/.test(row[0]!) && /^(counter|gauge|histogram|summary)$/.test(row[1] ?? ''));
    const documented = rows.map((row) => `${code(row[0]!)[0]} ${row[1]}`);
    expect(documented.length).toBeGreaterThan(30);
    expect(documented.sort()).toEqual(registered.sort());
  });
});

describe('the README', () => {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
  const lines = readme.trimEnd().split('\n');

  it('is a front door: at most 250 lines, none over 400 characters, with the two set-up commands in a code block', () => {
    expect(lines.length).toBeLessThanOrEqual(250);
    expect(lines.filter((line) => line.length > 400)).toEqual([]);
    expect(readme).toMatch(/```bash\nnpm ci +#[^\n]*\nnpm run local +#[^\n]*\n```/);
  });

  it('links only to files that exist', () => {
    const targets = [...readme.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/.test(t));
    expect(targets.length).toBeGreaterThan(10);
    const missing = targets.filter((target) => {
      try {
        readFileSync(new URL(`../../../${target}`, import.meta.url));
        return false;
      } catch {
        return true;
      }
    });
    expect(missing).toEqual([]);
  });
});
