/** The spec's §5.1 (docs/requirements.md) tools, read from the example file the README and `npm run local` use. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import { buildRegistry, type ToolRegistry } from '../../src/tools/registry/registry.js';

const FILE = fileURLToPath(new URL('../../examples/spec-tools.yaml', import.meta.url));

export interface SpecExample {
  tool: Record<string, Record<string, unknown>>;
  mcp: Record<string, Record<string, unknown>>;
}

export function loadSpecExample(): SpecExample {
  return parse(readFileSync(FILE, 'utf8')) as SpecExample;
}

/** The spec's tools loaded as the agent loads them, in a registry of workspace `w`. */
export function specRegistry(): ToolRegistry {
  const tools = Object.fromEntries(Object.entries(loadSpecExample().tool).map(([key, value]) => [key, JSON.stringify(value)]));
  return buildRegistry({ workspace: 'w', version: 1, tools }).registry;
}

/** Every group the spec §5.2 (docs/requirements.md) workflow needs in one conversation. */
export const WORKFLOW_GROUPS = ['read-only', 'knowledge', 'advanced', 'compute', 'admin'];

/**
 * A scripted model for the spec §5.2 (docs/requirements.md) workflow: undefined →(Knowledge Graph Query)→ analysis →(Complex Analysis
 * Tool)→ results →(Reset Workflow)→ undefined, then a final answer; one step per iteration, chosen by how much
 * history there is.
 */
export function workflowScript(terms: PromptTerms): string {
  switch ((terms.history as unknown[]).length) {
    case 0:
      return 'Thought: look\nAction: Knowledge Graph Query\nArgs: {"question": "Company X?"}';
    case 1:
      return 'Thought: analyse\nAction: Complex Analysis Tool\nArgs: {"dataset": "x"}';
    case 2:
      return 'Thought: reset\nAction: Reset Workflow\nArgs: {}';
    default:
      return 'Thought: done\nFinal Answer: done';
  }
}
