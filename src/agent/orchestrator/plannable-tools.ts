/**
 * The tools `plan-create` is shown: exactly those a plan may name (checkPlan in plan-then-execute.ts), so the
 * model is never refused for a tool it was not shown. A plan's steps run in order and each moves the state on,
 * so a step may use a tool of a state an earlier step leads to: the tools offered to the request's groups in
 * every state reachable from its state through such tools. A tool not offered in the current state says in its
 * description which state it needs, so the model orders the steps.
 */
import type { ToolRegistry } from '../../tools/index.js';
import type { AgentAsk } from '../../groups/index.js';

export interface PlannableTool {
  readonly name: string;
  readonly description: string | null;
}

export function plannableTools(registry: ToolRegistry, ask: Pick<AgentAsk, 'groups' | 'state'>): PlannableTool[] {
  const start = ask.state;
  const statesOf = new Map<string, { description: string | null; states: string[] }>();
  const seen = new Set([start]);
  const queue = [start];
  while (queue.length > 0) {
    const state = queue.shift()!;
    for (const tool of registry.offer({ groups: ask.groups, state }).tools) {
      const entry = statesOf.get(tool.name) ?? { description: tool.description, states: [] };
      entry.states.push(state);
      statesOf.set(tool.name, entry);
      const next = registry.nextState(tool, state);
      if (!seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  return [...statesOf].map(([name, { description, states }]) => ({
    name,
    description: states.includes(start)
      ? description
      : `${description ?? ''} (only once an earlier step has moved the state to ${states.map((s) => `"${s}"`).join(' or ')})`,
  }));
}
