/**
 * Flows: how the agent learns its queues. TrustGraph's flow service writes one entry per flow under
 * config type `processor:<processor id>`; the key is the flow id and the value is
 * `{"topics": {spec name → queue id}, "parameters": {...}}` (docs/trustgraph-wire-notes.md §1.12).
 */
import { z } from 'zod';

/** The queues an agent flow must name; a missing one stops that flow from starting (TrustGraph: KeyError). */
export const REQUIRED_FLOW_TOPICS = ['request', 'next', 'response', 'prompt-request', 'prompt-response'] as const;

/** Queues used only by some tool types; a tool of that type fails with a clear observation when absent. */
export const OPTIONAL_FLOW_TOPICS = [
  'text-completion-request',
  'text-completion-response',
  'graph-rag-request',
  'graph-rag-response',
  'mcp-tool-request',
  'mcp-tool-response',
  'structured-query-request',
  'structured-query-response',
  'embeddings-request',
  'embeddings-response',
  'row-embeddings-query-request',
  'row-embeddings-query-response',
  'explainability',
  'librarian-request',
  'librarian-response',
] as const;

export type FlowTopicName = (typeof REQUIRED_FLOW_TOPICS)[number] | (typeof OPTIONAL_FLOW_TOPICS)[number];

export interface FlowDefinition {
  readonly workspace: string;
  readonly flow: string;
  /** Spec name → TrustGraph queue id (or full Pulsar URI). */
  readonly topics: Readonly<Record<string, string>>;
  readonly parameters: Readonly<Record<string, unknown>>;
  /** Identity for diffing: same key + same topics = same running flow. */
  readonly fingerprint: string;
}

export interface FlowProblem {
  readonly workspace: string;
  readonly flow: string;
  readonly message: string;
}

const FlowEntrySchema = z.object({
  topics: z.record(z.string(), z.string().min(1)),
  parameters: z.record(z.string(), z.unknown()).nullish(),
});

/** Parse every entry of `processor:<id>` in one workspace; a bad entry is reported, the others load. */
export function parseFlows(
  workspace: string,
  entries: Readonly<Record<string, string>>,
): { flows: FlowDefinition[]; problems: FlowProblem[] } {
  const flows: FlowDefinition[] = [];
  const problems: FlowProblem[] = [];
  for (const flow of Object.keys(entries).sort()) {
    const raw = entries[flow] ?? '';
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (error) {
      problems.push({ workspace, flow, message: `flow config is not valid JSON: ${(error as Error).message}` });
      continue;
    }
    const parsed = FlowEntrySchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      problems.push({
        workspace,
        flow,
        message: `flow config field "${issue?.path.join('.') ?? ''}": ${issue?.message ?? 'invalid'}`,
      });
      continue;
    }
    const missing = REQUIRED_FLOW_TOPICS.filter((name) => !parsed.data.topics[name]);
    if (missing.length > 0) {
      problems.push({ workspace, flow, message: `flow config is missing topics: ${missing.join(', ')}` });
      continue;
    }
    const topics = Object.freeze({ ...parsed.data.topics });
    flows.push(
      Object.freeze({
        workspace,
        flow,
        topics,
        parameters: Object.freeze({ ...(parsed.data.parameters ?? {}) }),
        fingerprint: JSON.stringify(Object.entries(topics).sort(([a], [b]) => a.localeCompare(b))),
      }),
    );
  }
  return { flows, problems };
}

/** What to start and stop to go from the running flows to the wanted ones (a changed flow is both). */
export function diffFlows(
  running: ReadonlyMap<string, FlowDefinition>,
  wanted: readonly FlowDefinition[],
): { start: FlowDefinition[]; stop: FlowDefinition[] } {
  const wantedByKey = new Map(wanted.map((flow) => [flowKey(flow), flow]));
  const stop = [...running.values()].filter((flow) => wantedByKey.get(flowKey(flow))?.fingerprint !== flow.fingerprint);
  const start = wanted.filter((flow) => running.get(flowKey(flow))?.fingerprint !== flow.fingerprint);
  return { start, stop };
}

export function flowKey(flow: { workspace: string; flow: string }): string {
  return `${flow.workspace}\u0000${flow.flow}`;
}
