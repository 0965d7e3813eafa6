/**
 * Checks a Grafana dashboard's PromQL against what the agent actually exports: every metric name a panel
 * or template variable uses must be a family in a Prometheus text scrape (histograms only through their
 * `_bucket`, `_sum`, `_count` series), and every label a query filters or groups by must exist on the
 * metrics it uses. Shared by the unit test (scrape of a fresh `AgentMetrics` registry) and integration
 * tests (scrape of a running agent over HTTP).
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface MetricFamily {
  readonly name: string;
  readonly type: MetricType;
  /** Label names seen on the family's samples (plus any added by the caller), `le`/`quantile` excluded. */
  readonly labels: Set<string>;
  /** Sample lines seen. */
  samples: number;
  /**
   * Whether `labels` is complete. A family without samples (a labelled histogram nobody observed yet)
   * has unknown labels, and label checks on it are skipped; a caller that knows them sets this.
   */
  labelsKnown: boolean;
}

export type MetricFamilies = Map<string, MetricFamily>;

/** Labels Prometheus adds to every scraped series. */
const TARGET_LABELS = new Set(['instance', 'job']);

/** Identifiers of our metric families: the agent's (`tg_`) and prom-client's defaults (`process_`, `nodejs_`). */
const METRIC_IDENTIFIER = /\b(?:tg|process|nodejs)_[a-z0-9_]+\b/g;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'] as const;

/** Parse a Prometheus text-format exposition into families with their types and label names. */
export function parseExposition(text: string): MetricFamilies {
  const families: MetricFamilies = new Map();
  const lines = text.split('\n');
  for (const line of lines) {
    const type = /^# TYPE\s+([a-zA-Z_:][a-zA-Z0-9_:]*)\s+(\w+)\s*$/.exec(line);
    if (type) {
      const kind = (['counter', 'gauge', 'histogram', 'summary'].includes(type[2]!) ? type[2] : 'untyped') as MetricType;
      families.set(type[1]!, { name: type[1]!, type: kind, labels: new Set(), samples: 0, labelsKnown: false });
    }
  }
  for (const line of lines) {
    if (line === '' || line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+\S+/.exec(line);
    if (!sample) continue;
    const family = familyOfSample(sample[1]!, families);
    if (!family) continue;
    family.samples++;
    family.labelsKnown = true;
    for (const match of (sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\]|\\.)*"/g)) {
      const label = match[1]!;
      if (label !== 'le' && label !== 'quantile') family.labels.add(label);
    }
  }
  return families;
}

function familyOfSample(name: string, families: MetricFamilies): MetricFamily | undefined {
  const exact = families.get(name);
  if (exact) return exact;
  for (const suffix of [...HISTOGRAM_SUFFIXES, '_total', '_created']) {
    if (name.endsWith(suffix)) {
      const base = families.get(name.slice(0, -suffix.length));
      if (base) return base;
    }
  }
  return undefined;
}

/** PromQL with string literals emptied and comments removed, so names inside them are not read as metrics. */
export function stripPromqlStrings(expr: string): string {
  return expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/#[^\n]*/g, '');
}

/** Metric identifiers in a PromQL expression (our prefixes only), in order of first use. */
export function metricIdentifiers(expr: string): string[] {
  return [...new Set(stripPromqlStrings(expr).match(METRIC_IDENTIFIER) ?? [])];
}

export type Resolution =
  | { readonly ok: true; readonly family: MetricFamily; readonly suffix: string }
  | { readonly ok: false; readonly problem: string };

/**
 * Which exported family a PromQL identifier selects. A histogram (or summary) selected by its bare name
 * matches no series, so that is a problem too; `_bucket` exists only on histograms.
 */
export function resolveMetric(identifier: string, families: MetricFamilies): Resolution {
  const exact = families.get(identifier);
  if (exact && exact.type !== 'histogram' && exact.type !== 'summary') return { ok: true, family: exact, suffix: '' };
  if (exact) {
    return { ok: false, problem: `${identifier} is a ${exact.type}: select ${identifier}_bucket, _sum or _count` };
  }
  for (const suffix of HISTOGRAM_SUFFIXES) {
    if (!identifier.endsWith(suffix)) continue;
    const base = families.get(identifier.slice(0, -suffix.length));
    if (base?.type === 'histogram' || (base?.type === 'summary' && suffix !== '_bucket')) {
      return { ok: true, family: base, suffix };
    }
  }
  // OpenMetrics-style counter family names drop `_total`.
  if (identifier.endsWith('_total')) {
    const base = families.get(identifier.slice(0, -'_total'.length));
    if (base?.type === 'counter') return { ok: true, family: base, suffix: '_total' };
  }
  return { ok: false, problem: `${identifier} is not exported` };
}

export interface DashboardQuery {
  /** Where the query is: `panel 7 "Tool latency p95 by tool"` or `variable processor`. */
  readonly where: string;
  readonly expr: string;
}

interface PanelLike {
  id?: unknown;
  title?: unknown;
  targets?: unknown;
  panels?: unknown;
}

/** Every PromQL query of a dashboard: panel targets (rows included, collapsed or not) and query variables. */
export function dashboardQueries(dashboard: unknown): DashboardQuery[] {
  const out: DashboardQuery[] = [];
  const board = dashboard as { panels?: unknown; templating?: { list?: unknown } };
  const visit = (panels: unknown) => {
    if (!Array.isArray(panels)) return;
    for (const panel of panels as PanelLike[]) {
      const where = `panel ${String(panel.id)} "${String(panel.title)}"`;
      if (Array.isArray(panel.targets)) {
        for (const target of panel.targets as { expr?: unknown }[]) {
          if (typeof target.expr === 'string') out.push({ where, expr: target.expr });
        }
      }
      visit(panel.panels);
    }
  };
  visit(board.panels);
  const variables = Array.isArray(board.templating?.list) ? (board.templating.list as Record<string, unknown>[]) : [];
  for (const variable of variables) {
    if (variable.type !== 'query') continue;
    const query = variable.query;
    const expr = typeof query === 'string' ? query : (query as { query?: unknown } | undefined)?.query;
    if (typeof expr === 'string') out.push({ where: `variable ${String(variable.name)}`, expr });
  }
  return out;
}

/** Problems of one PromQL expression against the exported families; empty when it is fine. */
export function checkExpression(expr: string, families: MetricFamilies): string[] {
  const problems: string[] = [];
  const code = stripPromqlStrings(expr);
  const used: { identifier: string; family: MetricFamily; suffix: string }[] = [];
  for (const identifier of metricIdentifiers(expr)) {
    const resolved = resolveMetric(identifier, families);
    if (resolved.ok) used.push({ identifier, family: resolved.family, suffix: resolved.suffix });
    else problems.push(resolved.problem);
  }
  if (used.length === 0 && problems.length === 0) problems.push('uses no tg_/process_/nodejs_ metric');

  const extraLabels = (suffix: string) => (suffix === '_bucket' ? ['le'] : []);
  const labelsOf = (entry: (typeof used)[number]) => new Set([...entry.family.labels, ...extraLabels(entry.suffix), ...TARGET_LABELS]);

  // Label matchers right after a metric name: metric{label="..."}.
  for (const match of code.matchAll(/\b((?:tg|process|nodejs)_[a-z0-9_]+)\s*\{([^}]*)\}/g)) {
    const entry = used.find((u) => u.identifier === match[1]);
    if (!entry?.family.labelsKnown) continue;
    const allowed = labelsOf(entry);
    for (const matcher of match[2]!.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)) {
      if (!allowed.has(matcher[1]!)) problems.push(`${match[1]} has no label "${matcher[1]}"`);
    }
  }

  // Grouping and matching clauses: by (...), without (...), on (...), ignoring (...), group_left/right (...).
  if (used.length > 0 && used.every((u) => u.family.labelsKnown)) {
    const allowed = new Set(used.flatMap((u) => [...labelsOf(u)]));
    for (const clause of code.matchAll(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g)) {
      for (const raw of clause[1]!.split(',')) {
        const label = raw.trim();
        if (label === '') continue;
        if (!LABEL_NAME.test(label)) problems.push(`"${label}" is not a label name`);
        else if (!allowed.has(label)) problems.push(`no metric in the query has label "${label}"`);
      }
    }
  }

  // Template variable helper: label_values(metric, label).
  for (const call of code.matchAll(/\blabel_values\(\s*([a-z0-9_]+)\s*(?:\{[^}]*\})?\s*,\s*([^)\s]+)\s*\)/g)) {
    const entry = used.find((u) => u.identifier === call[1]);
    if (entry?.family.labelsKnown && !labelsOf(entry).has(call[2]!)) {
      problems.push(`${call[1]} has no label "${call[2]}"`);
    }
  }
  return problems;
}

/** Problems of every query of a dashboard, each prefixed with where it is. */
export function checkDashboardMetrics(dashboard: unknown, families: MetricFamilies): string[] {
  return dashboardQueries(dashboard).flatMap(({ where, expr }) =>
    checkExpression(expr, families).map((problem) => `${where}: ${problem} — in: ${expr}`),
  );
}
