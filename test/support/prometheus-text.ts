/** Reading a Prometheus text exposition in tests: the value of one series. */

/** Parse `name{a="b",c="d"} 12` lines into (name, labels, value). Comments and blank lines are skipped. */
export function parseExposition(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  const series: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!.replace(/\\"/g, '"').replace(/\\n/g, '\n').replace(/\\\\/g, '\\');
    }
    series.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return series;
}

/** The value of the one series with this name and (at least) these labels; undefined when absent. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const found = parseExposition(text).filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (found.length > 1) throw new Error(`${found.length} series of ${name} match ${JSON.stringify(labels)}; be more specific`);
  return found[0]?.value;
}

export async function scrape(baseUrl: string): Promise<string> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (!response.ok) throw new Error(`GET /metrics: ${response.status}`);
  return response.text();
}
