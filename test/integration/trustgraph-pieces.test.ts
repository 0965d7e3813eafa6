/**
 * The agent driven by TrustGraph 2.11.1's own code (from PyPI, in the venv scripts/trustgraph-venv.sh makes),
 * on the shared broker, the Python side over the native binary protocol:
 *  - the gateway's request path (dev/trustgraph/gateway_agent.py: trustgraph-flow's AgentRequestor with
 *    trustgraph-base's AgentRequestTranslator, JSON serialiser and Pulsar backend) asks, and reads our
 *    responses with TrustGraph's deserialiser and AgentResponseTranslator;
 *  - TrustGraph's real `mcp-tool` processor, configured from our config stand-in like any FlowProcessor
 *    (`processor:mcp-tool` flow entries, `mcp` entries), calls a real MCP server for the agent's mcp-tool tool;
 *  - TrustGraph's `api-gateway` with the `no-auth-svc` IAM regime and the `tg-invoke-agent` CLI, end to end.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startMcpServer, type McpServerStandIn } from '../../dev/stand-ins/mcp-server.js';
import type { PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import { offeredToolNames } from '../../dev/stand-ins/prompt-service.js';
import { startAgentHarness, type AgentHarness, type AgentHarnessOptions } from '../support/agent-harness.js';
import { knowledgeQueryTool, mcpTool, uniqueSuffix } from '../../dev/flow-config.js';
import { brokerUrls } from '../support/transport-contract.js';
import { freePort } from '../../dev/ports.js';
import { lintWorkspaceConfig, parseConfigDump } from '../../src/lint-command.js';
import {
  runCommand,
  startTrustGraphProcess,
  trustgraphVenv,
  type TrustGraphProcess,
} from '../../dev/trustgraph-pieces.js';
import { askAsGateway, contentOf, expectOneFinal, typesOf, type Json } from '../support/trustgraph-gateway.js';

const { webSocketUrl, serviceUrl } = brokerUrls();

/** Every TrustGraph program here: the test broker over the binary protocol, no metrics port, no Loki. */
const TG_COMMON_ARGS = ['--pulsar-host', serviceUrl, '--no-metrics', '--no-loki-enabled', '--log-level', 'INFO'];

const history = (terms: PromptTerms) => terms.history as { observation: string }[];

/** A model that plays `moves` in order, then answers with the last observation. */
function scripted(...moves: string[]) {
  return (terms: PromptTerms) =>
    moves[history(terms).length] ?? `Thought: done\nFinal Answer: saw: ${history(terms).at(-1)?.observation ?? ''}`;
}

let harness: AgentHarness | undefined;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  // Make (or find) the venv up front, so a missing one fails here with pip's own error.
  await trustgraphVenv();
}, 11 * 60_000);

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  await harness?.stop();
  harness = undefined;
});

async function start(options: Omit<AgentHarnessOptions, 'webSocketUrl'>): Promise<AgentHarness> {
  harness = await startAgentHarness({ webSocketUrl, ...options });
  return harness;
}

describe("TrustGraph's gateway request path (translator, serialiser, native client)", () => {
  it('non-streaming: the answer, explain triples and every field come back through TrustGraph\'s deserialiser', async () => {
    const h = await start({ script: () => 'Thought: The capital of France is Paris\nFinal Answer: Paris.' });

    const result = await askAsGateway(serviceUrl, h, { question: 'What is the capital of France?' });

    // TrustGraph's translator filled in the request as the gateway would; our agent read it.
    expect(result.request).toMatchObject({ question: 'What is the capital of France?', streaming: false, collection: 'default', group: null });
    expect(h.prompt.lastReact().terms.question).toBe('What is the capital of France?');
    expect(h.prompt.lastReact().streaming).toBe(false);

    expectOneFinal(result);
    expect(typesOf(result)).toBe('explain thought explain answer');
    const [session, thought, conclusion, answer] = result.responses;
    const sessionUri = String(session?.message.explain_id);
    expect(sessionUri).toMatch(/^urn:trustgraph:agent:[0-9a-f-]{36}$/);
    expect(thought?.translated).toEqual({
      message_type: 'thought',
      content: 'The capital of France is Paris',
      end_of_message: true,
      end_of_dialog: false,
      message_id: `${sessionUri}/i1/thought`,
    });
    expect(conclusion?.translated).toMatchObject({ message_type: 'explain', explain_id: `${sessionUri}/final`, explain_graph: 'urn:graph:retrieval' });
    expect(answer?.translated).toMatchObject({
      message_type: 'answer',
      content: 'Paris.',
      end_of_message: true,
      end_of_dialog: true,
      message_id: `${sessionUri}/final`,
    });
    expect(answer?.message.error).toBeNull();

    // The explain triples survived TrustGraph's deserialiser (Triple/Term dataclasses) and translator.
    const triples = session?.translated.explain_triples as { s: Json; p: Json; o: Json }[];
    expect(triples.length).toBeGreaterThan(0);
    const query = triples.find((t) => t.p.i === 'https://trustgraph.ai/ns/query');
    expect(query).toMatchObject({ s: { t: 'i', i: sessionUri }, o: { t: 'l', v: 'What is the capital of France?' } });
  });

  it('streaming: thought and answer chunks reassemble, and only the last message is final', async () => {
    const h = await start({ script: () => ['Thought: The capital', ' of France is Paris\nFinal', ' Answer: Par', 'is.'] });

    const result = await askAsGateway(serviceUrl, h, { question: 'What is the capital of France?', streaming: true });

    expect(h.prompt.lastReact().streaming).toBe(true);
    expectOneFinal(result);
    expect(typesOf(result)).toMatch(/^explain (thought )+(answer )*explain answer$/);
    expect(contentOf(result, 'thought').trim()).toBe('The capital of France is Paris');
    expect(contentOf(result, 'answer').trim()).toBe('Paris.');
  });

  it('a request with groups and a state, as TrustGraph serialises it, is filtered by them', async () => {
    const h = await start({
      tools: {
        lookup: knowledgeQueryTool('lookup', 'Look things up', { group: ['read-only'] }),
        wipe: mcpTool('wipe', 'wipe-server', [], 'Wipe everything', { group: ['admin'] }),
      },
    });

    const result = await askAsGateway(serviceUrl, h, { question: 'q', group: ['read-only'], state: 'undefined' });

    expect(result.request).toMatchObject({ group: ['read-only'], state: 'undefined' });
    expectOneFinal(result);
    expect(offeredToolNames(h.prompt.lastReact())).toEqual(['lookup']);
  });

  it('a tool iteration: the next request goes round the bus and the answer uses the observation', async () => {
    const h = await start({
      tools: { 'knowledge-query': knowledgeQueryTool('knowledge-query') },
      graphRag: () => 'X is a test thing.',
      script: scripted('Thought: I need to look this up\nAction: knowledge-query\nArgs: {"question": "What is X?"}'),
    });

    const result = await askAsGateway(serviceUrl, h, { question: 'Tell me about X' });

    expectOneFinal(result);
    // The second explain is graph RAG's own trace, handed on as TrustGraph's orchestrator does.
    expect(typesOf(result)).toBe('explain thought explain explain observation explain thought explain answer');
    expect(contentOf(result, 'observation')).toBe('X is a test thing.');
    expect(result.responses.at(-1)?.translated).toMatchObject({ message_type: 'answer', content: 'saw: X is a test thing.' });
    expect(h.graphRag.calls.map((c) => c.query)).toEqual(['What is X?']);
  });
});

// Each test starts a TrustGraph processor (a few seconds of Python imports and config loading on a busy machine).
describe("TrustGraph's mcp-tool service in front of a real MCP server", { timeout: 120_000 }, () => {
  /** Our agent's mcp-tool topics for this flow, away from the harness's mcp-tool stand-in. */
  const tgMcpTopics = (workspace: string, flow: string) => ({
    request: `request:tg:mcp-tool-tg:${workspace}:${flow}`,
    response: `response:tg:mcp-tool-tg:${workspace}:${flow}`,
  });

  /**
   * Start TrustGraph's `mcp-tool` on the broker with the flow's `processor:mcp-tool` entry and the given
   * `mcp` entries in the config stand-in (on TrustGraph's own config queues, where every FlowProcessor looks),
   * and wait until it has subscribed to the flow's request topic.
   */
  async function startTrustGraphMcpTool(h: AgentHarness, mcp: Record<string, Json>): Promise<TrustGraphProcess> {
    await h.config.putMany(h.workspace, [
      { type: 'processor:mcp-tool', key: h.flow, value: { topics: tgMcpTopics(h.workspace, h.flow), parameters: {} } },
      ...Object.entries(mcp).map(([key, value]) => ({ type: 'mcp', key, value })),
    ]);
    const processor = await startTrustGraphProcess('mcp-tool', TG_COMMON_ARGS);
    cleanups.push(() => processor.stop());
    await processor.waitForOutput(new RegExp(`Started flow: ${h.workspace}/${h.flow}\\b`), 45_000);
    await processor.waitForOutput(/Applied startup config version/, 45_000);
    return processor;
  }

  const DEFINE_ARGS = [{ name: 'term', type: 'string', description: 'The word to define' }];

  async function startWithTrustGraphMcp(script: (terms: PromptTerms) => string): Promise<AgentHarness> {
    const workspace = `ws-tgmcp-${uniqueSuffix(6)}`;
    return start({
      workspace,
      configQueues: 'trustgraph',
      tools: { define: mcpTool('define', 'dictionary', DEFINE_ARGS, 'Define a word') },
      flowConfig: {
        topics: { 'mcp-tool-request': tgMcpTopics(workspace, 'default').request, 'mcp-tool-response': tgMcpTopics(workspace, 'default').response },
      },
      script,
    });
  }

  it("the agent's tool call goes through TrustGraph's mcp-tool to the MCP server, and the answer comes back", async () => {
    const server: McpServerStandIn = await startMcpServer({
      tools: { lookup: { description: 'Look a word up', input: z.object({ term: z.string() }), handler: (args) => `a ${String(args.term)} is a rotating neutron star` } },
    });
    cleanups.push(() => server.stop());
    const h = await startWithTrustGraphMcp(scripted('Thought: look it up\nAction: define\nArgs: {"term": "pulsar"}'));
    await startTrustGraphMcpTool(h, { dictionary: { url: server.url, 'remote-name': 'lookup' } });

    const result = await h.ask({ question: 'What is a pulsar?' });

    expect(result.responses.filter((r) => r.end_of_dialog)).toHaveLength(1);
    expect(result.last).toMatchObject({ message_type: 'answer', content: 'saw: a pulsar is a rotating neutron star', error: null });
    const observation = result.responses.find((r) => r.message_type === 'observation');
    expect(observation?.content).toBe('a pulsar is a rotating neutron star');
    // The MCP server got the call TrustGraph's service made, under the remote name, with our arguments.
    expect(server.requests.map((r) => r.method)).toContain('tools/call');
    // The harness's own mcp-tool stand-in was never asked: TrustGraph's service answered.
    expect(h.mcp.calls).toEqual([]);
  });

  it("an MCP service TrustGraph's mcp-tool does not know: its error becomes the observation, one final answer", async () => {
    const h = await startWithTrustGraphMcp(scripted('Thought: look it up\nAction: define\nArgs: {"term": "pulsar"}'));
    await startTrustGraphMcpTool(h, {});

    const result = await h.ask({ question: 'What is a pulsar?' });

    expect(result.responses.filter((r) => r.end_of_dialog)).toHaveLength(1);
    const observation = result.responses.find((r) => r.message_type === 'observation');
    expect(observation?.content).toContain(`MCP service dictionary not known in workspace ${h.workspace}`);
    expect(result.last.message_type).toBe('answer');
  });

  it('the MCP server down: TrustGraph\'s mcp-tool reports it, the agent ends the dialog with one final message', async () => {
    const server = await startMcpServer({ tools: { lookup: { input: z.object({ term: z.string() }) } } });
    const url = server.url;
    await server.stop();
    const h = await startWithTrustGraphMcp(scripted('Thought: look it up\nAction: define\nArgs: {"term": "pulsar"}'));
    const processor = await startTrustGraphMcpTool(h, { dictionary: { url, 'remote-name': 'lookup' } });

    const result = await h.ask({ question: 'What is a pulsar?' });

    expect(result.responses.filter((r) => r.end_of_dialog)).toHaveLength(1);
    const observation = result.responses.find((r) => r.message_type === 'observation');
    // TrustGraph's tool-error, as the agent words a failed tool call for the model.
    expect(observation?.content).toMatch(/^Error: mcp-tool error \(tool-error\): .*connect/i);
    expect(processor.output()).toContain('Exception in tool service');
  });
});

describe("TrustGraph's api-gateway (no-auth IAM) and the tg-invoke-agent CLI, end to end", () => {
  it('tg-invoke-agent asks through the gateway; our agent answers; the CLI prints the answer', async () => {
    const workspace = `ws-tggw-${uniqueSuffix(6)}`;
    const h = await start({
      workspace,
      configQueues: 'trustgraph',
      tools: { 'knowledge-query': knowledgeQueryTool('knowledge-query') },
      graphRag: () => 'Paris is the capital of France.',
      script: scripted('Thought: I should check\nAction: knowledge-query\nArgs: {"question": "capital of France"}'),
    });
    // The workspace registry the gateway reads at start (what TrustGraph's IAM service writes).
    await h.config.put('__workspaces__', 'workspace', workspace, { enabled: true });

    const iam = await startTrustGraphProcess('no-auth-svc', [
      ...TG_COMMON_ARGS, '--default-workspace', workspace,
    ]);
    cleanups.push(() => iam.stop());
    // Its IAM consumer is subscribed (requests before that would be lost on the non-persistent topic).
    await iam.waitForOutput(/Added consumer: request:tg:iam\b/, 45_000);
    const port = await freePort();
    // trustgraph-flow's api-gateway entry point, with its minute-long wait for a signing key cut (see the file).
    const gateway = await startTrustGraphProcess('api_gateway.py', [...TG_COMMON_ARGS, '--port', String(port), '--timeout', '60']);
    cleanups.push(() => gateway.stop());
    await gateway.waitForOutput(new RegExp(`Starting flow: ${workspace}/${h.flow}\\b`), 45_000);
    await gateway.waitForOutput(/Running on http/, 45_000);

    const invoke = (...extra: string[]) =>
      runCommand('tg-invoke-agent', [
        '-u', `http://127.0.0.1:${port}/`, '-w', workspace, '-f', h.flow, '-q', 'What is the capital of France?', '-v', ...extra,
      ]);

    // Streaming (the CLI's default), then the non-streaming request.
    for (const extra of [[], ['--no-streaming']]) {
      const { stdout, stderr } = await invoke(...extra);
      // The CLI prints "Exception: ..." and exits 0 when anything fails, so its output is what tells.
      expect(stdout, `${extra.join(' ')}\n${stderr}`).not.toMatch(/Exception/);
      expect(stdout).toContain('saw: Paris is the capital of France.');
      expect(stdout).toContain('I should check');
    }
    expect(h.prompt.reactCalls().map((c) => c.streaming)).toEqual([true, true, false, false]);
    expect(h.prompt.reactCalls().map((c) => c.terms.question)).toEqual(Array(4).fill('What is the capital of France?'));
    expect(h.graphRag.calls.map((c) => c.query)).toEqual(['capital of France', 'capital of France']);

    // The workspace as TrustGraph's own `tg-show-config` dumps it through the gateway, linted from the dump
    // (tg-agent lint --file): a misspelt group seeded in one of three tools is found.
    await h.config.putMany(workspace, [
      { type: 'tool', key: 'notes-a', value: { type: 'text-completion', name: 'Notes A', group: ['research'] } },
      { type: 'tool', key: 'notes-b', value: { type: 'text-completion', name: 'Notes B', group: ['research'] } },
      { type: 'tool', key: 'notes-c', value: { type: 'text-completion', name: 'Notes C', group: ['reserch'] } },
    ]);
    await h.config.serveWorkspace(workspace);
    const dump = await runCommand('tg-show-config', ['-u', `http://127.0.0.1:${port}/`, '-w', workspace], 20_000).catch((error: unknown) => {
      throw new Error(`${String(error)}\ngateway:\n${gateway.output().slice(-3000)}\nconfig calls: ${JSON.stringify(h.config.calls.slice(-5))}`);
    });
    expect(dump.stdout).toMatch(/^Version: \d+\n\{/);
    const report = lintWorkspaceConfig(workspace, parseConfigDump(dump.stdout));
    expect(report.entryProblems).toEqual([]);
    expect(report.findings.filter((f) => f.severity !== 'info').map((f) => `${f.check} ${f.tools.join(',')}`)).toEqual(['group-near-miss Notes C']);
  }, 120_000);
});
