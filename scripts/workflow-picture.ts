/**
 * `npm run workflow:picture`: draws the spec's five-tool example (examples/spec-tools.yaml) as the agent's
 * `/workflow/<ws>.svg` draws it, for a request with groups read-only,knowledge in state analysis, into
 * docs/workflow-example.svg (docs/operating.md shows it; test/unit/docs/workflow-picture.test.ts keeps it current).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { buildRegistry } from '../src/tools/registry/registry.js';
import { workflowGraph } from '../src/workflow/workflow-graph.js';
import { toSvg } from '../src/workflow/workflow-text.js';

export const PICTURE_FILE = fileURLToPath(new URL('../docs/workflow-example.svg', import.meta.url));
const EXAMPLE = fileURLToPath(new URL('../examples/spec-tools.yaml', import.meta.url));

export async function examplePicture(): Promise<string> {
  const spec = parse(readFileSync(EXAMPLE, 'utf8')) as { tool: Record<string, object> };
  const tools = Object.fromEntries(Object.entries(spec.tool).map(([key, value]) => [key, JSON.stringify(value)]));
  const { registry } = buildRegistry({ workspace: 'default', version: 1, tools });
  return toSvg(workflowGraph(registry, undefined, { groups: ['read-only', 'knowledge'], state: 'analysis' }));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(PICTURE_FILE, await examplePicture());
  console.log(`wrote ${PICTURE_FILE}`);
}
