/**
 * One scripted scenario for TrustGraph's orchestrator patterns (`react`, `plan-then-execute`, `supervisor`, and an
 * empty `pattern` for the meta-router), shared by the test that runs TrustGraph 2.11.1's own orchestrator and the
 * tests of our agent, so both are driven by the same model and tools and their message sequences can be compared.
 *
 * The model answers every prompt template the orchestrator uses: `agent-react` (a tool call, then an answer from
 * the observation), `task-type-classify`, `pattern-select`, `plan-create`, `plan-step-execute`, `plan-synthesise`,
 * `supervisor-decompose` and `supervisor-synthesise`. Every reply carries token usage (`in_token`, `out_token`,
 * `model`) fixed per template, so the sums on a final message say which calls they cover.
 *
 * `normaliseSequence` turns what came back (responses, and the requests the agent published on the request topic)
 * into a comparable form: uuids become `<uuid-N>` in order of first appearance, times and durations placeholders,
 * explain triples sorted.
 */
import type { PromptCall, PromptScript, PromptTerms, PromptUsage } from './prompt-service.js';
import type { AgentRequest, AgentResponse } from '../../src/wire/index.js';
import { knowledgeQueryTool } from '../flow-config.js';

export type OrchestratorPattern = 'react' | 'plan-then-execute' | 'supervisor' | '';

/** The one tool of the scenario: a knowledge-query tool (answered by the graph-rag stand-in). */
export const SCENARIO_TOOL = 'lookup';
export const SCENARIO_TOOLS: Record<string, object> = {
  [SCENARIO_TOOL]: knowledgeQueryTool(SCENARIO_TOOL, 'Look a term up in the knowledge graph'),
};

/** What the graph-rag stand-in answers: the observation of every `lookup` call. */
export const scenarioGraphRag = (query: string): string => `Fact about ${query}`;

/** Config the meta-router reads (types `agent-pattern`, `agent-task-type`), as TrustGraph's templates write it. */
export const SCENARIO_ROUTER_CONFIG: { type: string; key: string; value: object }[] = [
  { type: 'agent-pattern', key: 'react', value: { name: 'react', description: 'Interleaved reasoning and action' } },
  { type: 'agent-pattern', key: 'plan-then-execute', value: { name: 'plan-then-execute', description: 'Plan the steps, then run them' } },
  { type: 'agent-pattern', key: 'supervisor', value: { name: 'supervisor', description: 'Split the task among subagents' } },
  {
    type: 'agent-task-type',
    key: 'general',
    value: { name: 'general', description: 'General queries', valid_patterns: ['react'], framing: '' },
  },
  {
    type: 'agent-task-type',
    key: 'research',
    value: {
      name: 'research',
      description: 'Questions that need several facts',
      valid_patterns: ['react', 'plan-then-execute', 'supervisor'],
      framing: 'Answer as a careful researcher.',
    },
  },
];

/** The question asked with each pattern. */
export const SCENARIO_QUESTIONS: Record<OrchestratorPattern, string> = {
  react: 'What is a pulsar?',
  'plan-then-execute': 'How do pulsars and quasars differ?',
  supervisor: 'Tell me about pulsars and quasars.',
  '': 'Which is brighter, a pulsar or a quasar?',
};

/** The session id the scenario's `sessionId` cases send. */
export const SCENARIO_SESSION_ID = '5e55e55e-0000-4000-8000-000000000001';

/** The cases recorded from TrustGraph's orchestrator, and the golden file of each. */
export const SCENARIO_CASES: (ScenarioCase & { fixture: string })[] = [
  { pattern: 'react', fixture: 'react.json' },
  { pattern: 'react', streaming: true, fixture: 'react-streaming.json' },
  { pattern: 'react', sessionId: SCENARIO_SESSION_ID, fixture: 'react-session.json' },
  { pattern: 'plan-then-execute', fixture: 'plan-then-execute.json' },
  { pattern: 'plan-then-execute', streaming: true, fixture: 'plan-then-execute-streaming.json' },
  { pattern: 'supervisor', fixture: 'supervisor.json' },
  { pattern: 'supervisor', streaming: true, fixture: 'supervisor-streaming.json' },
  { pattern: '', fixture: 'empty.json' },
  { pattern: '', sessionId: SCENARIO_SESSION_ID, fixture: 'empty-session.json' },
];

/** A test title for one case. */
export function caseTitle({ pattern, streaming, sessionId }: ScenarioCase): string {
  return `pattern ${JSON.stringify(pattern)}${streaming ? ', streaming' : ''}${sessionId ? ', with a session id' : ''}`;
}

/** How one scenario request is sent. */
export interface ScenarioCase {
  pattern: OrchestratorPattern;
  streaming?: boolean;
  /** A client-chosen session id (tg-invoke-agent sends none; TrustGraph then makes one per conversation). */
  sessionId?: string;
}

/**
 * The AgentRequest payload TrustGraph's gateway publishes for a client body `{question, pattern, streaming[,
 * session_id]}`: its AgentRequestTranslator leaves `state` and `group` null when the client sent none, and its
 * serialiser writes every field of the dataclass.
 */
export function gatewayRequestPayload({ pattern, streaming = false, sessionId = '' }: ScenarioCase): Buffer {
  return Buffer.from(
    JSON.stringify({
      question: SCENARIO_QUESTIONS[pattern],
      state: null,
      group: null,
      history: [],
      collection: 'default',
      streaming,
      session_id: sessionId,
      conversation_id: '',
      pattern,
      task_type: '',
      framing: '',
      correlation_id: '',
      parent_session_id: '',
      subagent_goal: '',
      expected_siblings: 0,
    }),
    'utf8',
  );
}

/** Token usage per template: distinct numbers, so a sum says which calls it covers. */
export const SCENARIO_USAGE: Record<string, { in_token: number; out_token: number }> = {
  'agent-react': { in_token: 100, out_token: 10 },
  'task-type-classify': { in_token: 200, out_token: 1 },
  'pattern-select': { in_token: 300, out_token: 2 },
  'plan-create': { in_token: 400, out_token: 40 },
  'plan-step-execute': { in_token: 500, out_token: 50 },
  'plan-synthesise': { in_token: 600, out_token: 60 },
  'supervisor-decompose': { in_token: 700, out_token: 70 },
  'supervisor-synthesise': { in_token: 800, out_token: 80 },
};
export const SCENARIO_MODEL = 'scripted-model-1';

export const scenarioUsage: PromptUsage = (call: PromptCall) => {
  const usage = SCENARIO_USAGE[call.id];
  return usage ? { ...usage, model: SCENARIO_MODEL } : undefined;
};

const history = (terms: PromptTerms): { observation?: string }[] =>
  Array.isArray(terms.history) ? (terms.history as { observation?: string }[]) : [];

/** `agent-react`: look the question up, then answer with what the lookup said. */
export const scenarioReact: PromptScript = (terms) => {
  const question = String(terms.question ?? '');
  const past = history(terms);
  if (past.length === 0) {
    return `Thought: I should look this up\nAction: ${SCENARIO_TOOL}\nArgs: {"question": ${JSON.stringify(question)}}`;
  }
  return `Thought: I know the answer now\nFinal Answer: ${past.at(-1)?.observation ?? ''}`;
};

/** The plan `plan-create` returns: two lookups, the second depending on the first. */
export const SCENARIO_PLAN = [
  { goal: 'Look up pulsars', tool_hint: SCENARIO_TOOL, depends_on: [] },
  { goal: 'Look up quasars', tool_hint: SCENARIO_TOOL, depends_on: [0] },
];

/** The goals `supervisor-decompose` returns. */
export const SCENARIO_GOALS = ['What is a pulsar?', 'What is a quasar?'];

const stepsOf = (terms: PromptTerms, name: string): Record<string, unknown>[] =>
  Array.isArray(terms[name]) ? (terms[name] as Record<string, unknown>[]) : [];

/** Every template but `agent-react`, by template id. */
export const SCENARIO_TEMPLATES: Record<string, PromptScript> = {
  // The meta-router: the question names what it needs.
  'task-type-classify': () => 'research',
  'pattern-select': () => 'plan-then-execute',
  'plan-create': () => ({ object: SCENARIO_PLAN }),
  'plan-step-execute': (terms) => ({ object: { tool: SCENARIO_TOOL, arguments: { question: String(terms.goal ?? '') } } }),
  'plan-synthesise': (terms) =>
    `Plan result: ${stepsOf(terms, 'steps')
      .map((s) => String(s.result))
      .join('; ')}`,
  'supervisor-decompose': () => ({ object: SCENARIO_GOALS }),
  'supervisor-synthesise': (terms) =>
    `Supervisor result: ${stepsOf(terms, 'results')
      .map((r) => `${String(r.goal)} => ${String(r.result)}`)
      .join('; ')}`,
};

// ---- Normalising what came back --------------------------------------------------------------------------------

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const CONVERSATION_SUFFIX = /\/c-[0-9a-f]{16}\b/g;
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
/** Explain predicates whose values are measurements, not behaviour. */
const MEASURED = /(duration|Duration|Ms|startedAtTime|endedAtTime|timestamp|generatedAtTime)>$/;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface NormalisedTriple {
  s: string;
  p: string;
  o: string;
  g?: string;
}

export interface NormalisedResponse {
  message_type: string;
  content: string;
  end_of_message: boolean;
  end_of_dialog: boolean;
  message_id: string;
  explain_id: string;
  explain_graph: string;
  explain_triples: NormalisedTriple[];
  error: { type: string; message: string } | null;
  in_token: number | null;
  out_token: number | null;
  model: string | null;
}

export interface NormalisedSequence {
  responses: NormalisedResponse[];
  /** What the agent published on the request topic (`next` iterations, subagent requests and completions). */
  requests: Json[];
  /** The prompt service calls the agent made, in order: template id, streaming, decoded terms. */
  prompts: Json[];
}

/** Renames uuids in order of first appearance, across one whole sequence. */
class UuidNames {
  private readonly names = new Map<string, string>();
  rename(text: string): string {
    // tg-agent's own difference: a librarian document id ends with its conversation's suffix (TrustGraph's does not).
    return text.replace(CONVERSATION_SUFFIX, '').replace(UUID, (uuid) => {
      let name = this.names.get(uuid);
      if (!name) {
        name = `<uuid-${this.names.size + 1}>`;
        this.names.set(uuid, name);
      }
      return name;
    });
  }
}

/** A Term as TrustGraph's serialiser writes it (`{type, iri, value, datatype, language, triple, ...}`), as text. */
function termText(term: unknown, names: UuidNames, predicate = ''): string {
  if (term === null || term === undefined) return '';
  const t = term as Record<string, unknown>;
  if (t.type === 'i') return `<${names.rename(String(t.iri))}>`;
  if (t.type === 'l') {
    const value = String(t.value);
    const suffix = t.datatype ? `^^<${String(t.datatype)}>` : t.language ? `@${String(t.language)}` : '';
    if (ISO_TIME.test(value)) return `"<time>"${suffix}`;
    if (MEASURED.test(predicate)) return `"<measured>"${suffix}`;
    return `${JSON.stringify(names.rename(value))}${suffix}`;
  }
  if (t.type === 't' && t.triple) {
    const inner = t.triple as Record<string, unknown>;
    const p = termText(inner.p, names);
    return `<< ${termText(inner.s, names)} ${p} ${termText(inner.o, names, p)} >>`;
  }
  return names.rename(JSON.stringify(term));
}

function normaliseTriples(triples: unknown, names: UuidNames): NormalisedTriple[] {
  if (!Array.isArray(triples)) return [];
  const out = triples.map((triple) => {
    const t = triple as Record<string, unknown>;
    const p = termText(t.p, names);
    const n: NormalisedTriple = { s: termText(t.s, names), p, o: termText(t.o, names, p) };
    if (t.g) n.g = names.rename(String(t.g));
    return n;
  });
  const key = (t: NormalisedTriple): string => `${t.s} ${t.p} ${t.o} ${t.g ?? ''}`;
  return out.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

function normaliseJson(value: unknown, names: UuidNames): Json {
  if (typeof value === 'string') return names.rename(value);
  if (Array.isArray(value)) return value.map((v) => normaliseJson(v, names));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, normaliseJson((value as Record<string, unknown>)[k], names)]),
    );
  }
  return (value ?? null) as Json;
}

/**
 * The comparable form of one conversation: every response (in order) and every request the agent published on
 * the request topic (in order), with ids and times replaced.
 */
export function normaliseSequence(
  responses: readonly AgentResponse[] | readonly Record<string, unknown>[],
  requests: readonly AgentRequest[] | readonly Record<string, unknown>[],
  prompts: readonly Pick<PromptCall, 'id' | 'streaming' | 'terms'>[] = [],
): NormalisedSequence {
  const names = new UuidNames();
  const normalisedResponses = responses.map((response) => {
    const r = response as Record<string, unknown>;
    const error = r.error as { type?: string; message?: string } | null | undefined;
    return {
      message_type: String(r.message_type ?? ''),
      content: names.rename(String(r.content ?? '')),
      end_of_message: Boolean(r.end_of_message),
      end_of_dialog: Boolean(r.end_of_dialog),
      message_id: names.rename(String(r.message_id ?? '')),
      explain_id: names.rename(String(r.explain_id ?? '')),
      explain_graph: String(r.explain_graph ?? ''),
      explain_triples: normaliseTriples(r.explain_triples, names),
      error: error ? { type: String(error.type ?? ''), message: names.rename(String(error.message ?? '')) } : null,
      in_token: typeof r.in_token === 'number' ? r.in_token : null,
      out_token: typeof r.out_token === 'number' ? r.out_token : null,
      model: typeof r.model === 'string' ? r.model : null,
    };
  });
  return {
    responses: normalisedResponses,
    requests: requests.map((request) => normaliseJson(request, names)),
    prompts: prompts.map((call) => normaliseJson({ id: call.id, streaming: call.streaming, terms: call.terms }, names)),
  };
}

/** One line per response (`type[eom,eod] message_id|explain_id`): what a reader compares first. */
export function sequenceOutline(sequence: NormalisedSequence): string[] {
  return sequence.responses.map((r) => {
    const flags = [r.end_of_message ? 'eom' : '', r.end_of_dialog ? 'eod' : ''].filter(Boolean).join(',');
    const id = r.message_type === 'explain' ? r.explain_id : r.message_id;
    const tokens = r.in_token !== null || r.out_token !== null ? ` tokens=${r.in_token}/${r.out_token}/${r.model}` : '';
    return `${r.message_type}${flags ? `[${flags}]` : ''} ${id}${tokens}`;
  });
}
