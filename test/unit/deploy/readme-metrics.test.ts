/** The metrics reference (docs/metrics.md) against the metrics the agent really exports: none missing, none invented. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshMetricFamilies } from '../../support/fresh-metrics.js';

const METRICS_DOC = readFileSync(join(import.meta.dirname, '../../../docs/metrics.md'), 'utf8');

/** Metric names of the table rows of the "Metrics reference" section of docs/metrics.md. */
function documentedMetrics(): Map<string, string> {
  const section = /^## Metrics reference\n([\s\S]*?)^## /m.exec(METRICS_DOC)?.[1] ?? '';
  const rows = [...section.matchAll(/^\| `([a-z_]+)` \| (\w+) \|/gm)];
  return new Map(rows.map((row) => [row[1]!, row[2]!]));
}

describe('the metrics reference', () => {
  it('lists every tg_ metric the agent exports, with its type, and no other', async () => {
    const exported = new Map(
      [...(await freshMetricFamilies()).values()].filter((f) => f.name.startsWith('tg_')).map((f) => [f.name, f.type as string]),
    );
    const documented = documentedMetrics();
    expect(documented.size).toBeGreaterThan(20);
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(exported));
  });
});
