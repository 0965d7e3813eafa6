/** The spec's §5.1 tools, read from the example file the README and `npm run local` use. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const FILE = fileURLToPath(new URL('../../examples/spec-tools.yaml', import.meta.url));

export interface SpecExample {
  tool: Record<string, Record<string, unknown>>;
  mcp: Record<string, Record<string, unknown>>;
}

export function loadSpecExample(): SpecExample {
  return parse(readFileSync(FILE, 'utf8')) as SpecExample;
}

/** Every group the §5.2 workflow needs in one conversation. */
export const WORKFLOW_GROUPS = ['read-only', 'knowledge', 'advanced', 'compute', 'admin'];
