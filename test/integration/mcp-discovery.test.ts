/**
 * MCP argument discovery (design decision 9 (docs/design.md), issue #8) end to end: the whole app on the real broker with
 * `mcpDiscovery` on, a REAL MCP server (the SDK's McpServer over Streamable HTTP, dev/stand-ins/mcp-server.ts)
 * that discovery asks for `tools/list`, and TrustGraph's mcp-tool service stand-in on Pulsar that the agent's
 * tool calls go to. Metrics and the tool listing are read over HTTP; log lines from the real logger.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import type { Settings } from '../../src/settings.js';
import type { ToolRegistry } from '../../src/tools/registry/registry.js';
import type { PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import { startMcpServer, type McpServerStandIn } from '../../dev/stand-ins/mcp-server.js';
import { startAgentHarness, type AgentHarness, type AgentHarnessOptions } from '../support/agent-harness.js';
import { mcpTool } from '../../dev/flow-config.js';
import { sample, scrape } from '../support/prometheus-text.js';
import { testTransports, type TransportKind } from '../support/transports.js';

type Json = Record<string, unknown>;

function capturingLogger() {
  const lines: Json[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Json);
      callback();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

let harness: AgentHarness | undefined;
let server: McpServerStandIn | undefined;
afterEach(async () => {
  await harness?.stop();
  await server?.stop();
  harness = undefined;
  server = undefined;
});

const DISCOVERY: Partial<Settings> = { mcpDiscovery: true, mcpDiscoveryTtlSeconds: 1, mcpDiscoveryTimeoutSeconds: 2 };

/** The transport of the block being run (set in its beforeAll). */
let transportKind: TransportKind = 'websocket';

async function start(options: Partial<AgentHarnessOptions>, app: Partial<Settings> = {}): Promise<AgentHarness> {
  harness = await startAgentHarness({ transport: transportKind, webSocketUrl: inject('pulsarWebSocketUrl'), app: { ...DISCOVERY, ...app }, ...options });
  return harness;
}

const registryOf = (h: AgentHarness): ToolRegistry => h.service.registries.get(h.workspace);

async function listing(h: AgentHarness): Promise<Json> {
  const response = await fetch(`${h.httpUrl()}/tools/${encodeURIComponent(h.workspace)}`);
  expect(response.status).toBe(200);
  return (await response.json()) as Json;
}

const listedTool = (body: Json, name: string): Json =>
  (body.tools as Json[]).find((t) => t.name === name) ?? ({} as Json);

const offeredTools = (terms: PromptTerms) => terms.tools as { name: string; arguments: Json[] }[];

const history = (terms: PromptTerms) => terms.history as { observation: string }[];

/** A model that plays `moves` in order, then answers with the last observation. */
function scripted(...moves: string[]) {
  return (terms: PromptTerms) => {
    const step = history(terms).length;
    return moves[step] ?? `Thought: done\nFinal Answer: saw: ${history(terms).at(-1)?.observation ?? ''}`;
  };
}

const SEARCH_INPUT = z.object({
  query: z.string().describe('What to look for'),
  filter: z
    .object({ since: z.string().describe('ISO date'), tags: z.array(z.string()).optional() })
    .optional()
    .describe('Narrow the search'),
});

describe.each(testTransports())('an mcp-tool without arguments [%s]', (kind) => {
  beforeAll(() => {
    transportKind = kind;
  });

  it('is offered with the server\'s arguments, and its calls are validated against the server\'s schema', async () => {
    server = await startMcpServer({ requireToken: 'tok-7', tools: { search: { description: 'Search the catalogue', input: SEARCH_INPUT } } });
    const h = await start({
      tools: { search: mcpTool('search', 'catalogue', [], 'Search the catalogue') },
      mcpTools: { catalogue: (parameters) => `found for ${JSON.stringify(parameters)}` },
      script: scripted(
        'Thought: search\nAction: search\nArgs: {"query": "pulsar", "filter": {"since": {"year": 2024}}}',
        'Thought: fix it\nAction: search\nArgs: {"query": "pulsar", "filter": {"since": "2024-01-01", "tags": ["db"]}}',
      ),
    });
    await h.config.put(h.workspace, 'mcp', 'catalogue', { url: server.url, 'remote-name': 'search', 'auth-token': 'tok-7' });
    await h.configApplied();
    await h.waitFor(() => registryOf(h).mcp.get('search')?.source === 'discovered', 'the server\'s arguments to be discovered');

    const result = await h.ask({ question: 'find pulsar books' });

    // The model was shown the server's arguments.
    const offered = offeredTools(h.prompt.reactCalls()[0]!.terms).find((t) => t.name === 'search')!;
    expect(offered.arguments).toEqual([
      { name: 'query', type: 'string', description: 'What to look for', required: true },
      {
        name: 'filter',
        type: 'object',
        description: 'Narrow the search A JSON object with fields: since (string, required), tags (array).',
        required: false,
      },
    ]);
    // The bad nested value became an observation naming it; the MCP tool service was not called for it.
    const first = result.nextRequests[0]!.history[0]!.observation;
    expect(first).toBe(
      'Error: invalid arguments for tool "search": argument "filter.since" must be a string, got an object. ' +
        'The tool was not called; fix the arguments and try again.',
    );
    // The good call went through TrustGraph's mcp-tool service, once, under the mcp key.
    expect(h.mcp.calls.map((c) => [c.name, c.parameters])).toEqual([['catalogue', { query: 'pulsar', filter: { since: '2024-01-01', tags: ['db'] } }]]);
    expect(result.answer).toBe('saw: found for {"query":"pulsar","filter":{"since":"2024-01-01","tags":["db"]}}');

    // Discovery asked the server with the bearer token.
    expect(server.listCalls()).toBeGreaterThanOrEqual(1);
    expect(server.requests.every((r) => r.authorization === 'Bearer tok-7')).toBe(true);

    const text = await scrape(h.httpUrl());
    const p = { processor: 'agent-manager' };
    expect(sample(text, 'tg_agent_argument_validation_failures_total', { ...p, tool: 'search' })).toBe(1);
    expect(sample(text, 'tg_agent_mcp_tool_arguments', { ...p, workspace: h.workspace, source: 'discovered' })).toBe(1);
    expect(sample(text, 'tg_agent_mcp_discovery_failing', { ...p, workspace: h.workspace })).toBe(0);

    const body = await listing(h);
    expect(listedTool(body, 'search').mcp).toEqual({
      mcpKey: 'catalogue',
      remoteName: 'search',
      source: 'discovered',
      discovery: 'ok',
      reason: null,
      error: null,
      drift: [],
    });
    expect((body.mcpDiscovery as Json).entries).toEqual([
      expect.objectContaining({ key: 'catalogue', url: server.url, remoteName: 'search', auth: true, status: 'ok' }),
    ]);
    expect(JSON.stringify(body)).not.toContain('tok-7');
  });
});

describe.each(testTransports())('an mcp-tool with declared arguments [%s]', (kind) => {
  beforeAll(() => {
    transportKind = kind;
  });

  it('keeps them, and reports a retyped argument as drift in the listing, the metric and the log until the server agrees', async () => {
    server = await startMcpServer({
      tools: { convert: { input: z.object({ amount: z.string(), currency: z.string() }) } },
    });
    const { logger, lines } = capturingLogger();
    const declared = [
      { name: 'amount', type: 'number', description: 'How much' },
      { name: 'currency', type: 'string', description: 'ISO code' },
    ];
    const h = await start({
      logger,
      tools: { convert: mcpTool('convert', 'fx', declared) },
      mcpTools: { fx: () => 'converted' },
      script: scripted('Thought: convert\nAction: convert\nArgs: {"amount": "12.5", "currency": "EUR"}'),
    });
    await h.config.put(h.workspace, 'mcp', 'fx', { url: server.url, 'remote-name': 'convert' });
    await h.configApplied();
    await h.waitFor(() => registryOf(h).mcp.get('convert')?.discovery === 'ok', 'the server\'s schema to be read');

    // The declared contract stays in force: "12.5" is coerced to the declared number and sent.
    const result = await h.ask({ question: 'convert' });
    expect(h.mcp.calls.map((c) => c.parameters)).toEqual([{ amount: 12.5, currency: 'EUR' }]);
    expect(result.answer).toBe('saw: converted');

    const drift = (listedTool(await listing(h), 'convert').mcp as Json).drift;
    expect(drift).toEqual([
      {
        argument: 'amount',
        kind: 'type',
        declared: 'number',
        server: 'string',
        message: 'argument "amount" is declared number but the server\'s input schema says string',
      },
    ]);
    const labels = { processor: 'agent-manager', workspace: h.workspace, tool: 'convert' };
    expect(sample(await scrape(h.httpUrl()), 'tg_agent_mcp_argument_drift', labels)).toBe(1);
    const logged = lines.find((l) => typeof l.msg === 'string' && l.msg.includes('drift from MCP tool "convert"'));
    expect(logged).toMatchObject({ level: 40, workspace: h.workspace, key: 'convert', field: 'arguments' });
    expect(logged?.msg).toContain('argument "amount" is declared number but the server\'s input schema says string');

    // The server is fixed; the next refresh (TTL 1 s) clears the drift.
    server.tools.convert = { input: z.object({ amount: z.number(), currency: z.string() }) };
    await h.waitFor(() => registryOf(h).mcp.get('convert')?.drift.length === 0, 'the drift to clear', 10_000);
    expect(sample(await scrape(h.httpUrl()), 'tg_agent_mcp_argument_drift', labels)).toBe(0);
  });
});

describe.each(testTransports())('an MCP server that is down [%s]', (kind) => {
  beforeAll(() => {
    transportKind = kind;
  });

  it('blocks nothing: tools fall back to declared arguments or none, the failure is visible, and discovery recovers', async () => {
    server = await startMcpServer({ tools: { lookup: { input: z.object({ id: z.string() }) }, pinned: { input: z.object({ q: z.string() }) } } });
    await server.stop();
    const { logger, lines } = capturingLogger();
    const h = await start({
      logger,
      tools: {
        lookup: mcpTool('lookup', 'lookup-srv', []),
        pinned: mcpTool('pinned', 'pinned-srv', [{ name: 'q', type: 'string', description: 'query' }]),
      },
      mcpTools: { 'pinned-srv': (parameters) => `pinned ${JSON.stringify(parameters)}` },
      script: scripted('Thought: use the pinned one\nAction: pinned\nArgs: {"q": "x"}'),
    });
    await h.config.putMany(h.workspace, [
      { type: 'mcp', key: 'lookup-srv', value: { url: server.url, 'remote-name': 'lookup' } },
      { type: 'mcp', key: 'pinned-srv', value: { url: server.url, 'remote-name': 'pinned' } },
    ]);
    await h.configApplied();
    await h.waitFor(() => registryOf(h).mcp.get('lookup')?.discovery === 'failed', 'discovery to fail');

    const result = await h.ask({ question: 'q' });
    expect(result.answer).toBe('saw: pinned {"q":"x"}');
    const offered = offeredTools(h.prompt.reactCalls()[0]!.terms);
    expect(offered.find((t) => t.name === 'lookup')!.arguments).toEqual([]);
    expect(offered.find((t) => t.name === 'pinned')!.arguments).toEqual([{ name: 'q', type: 'string', description: 'query', required: true }]);

    const text = await scrape(h.httpUrl());
    const p = { processor: 'agent-manager' };
    expect(sample(text, 'tg_agent_mcp_discovery_failures_total', { ...p, reason: 'unreachable' })).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'tg_agent_mcp_discovery_failing', { ...p, workspace: h.workspace })).toBe(2);
    expect(sample(text, 'tg_agent_mcp_tool_arguments', { ...p, workspace: h.workspace, source: 'none' })).toBe(1);
    expect(sample(text, 'tg_agent_mcp_tool_arguments', { ...p, workspace: h.workspace, source: 'declared' })).toBe(1);

    const body = await listing(h);
    expect(listedTool(body, 'lookup').mcp).toMatchObject({ source: 'none', discovery: 'failed', reason: 'unreachable' });
    const entries = (body.mcpDiscovery as Json).entries as Json[];
    expect(entries.map((e) => [e.key, e.status, e.reason])).toEqual([
      ['lookup-srv', 'failed', 'unreachable'],
      ['pinned-srv', 'failed', 'unreachable'],
    ]);
    expect(entries[0]!.error).toBe(`cannot reach MCP server ${server.url} (ECONNREFUSED); check the "url" of the mcp entry and that the server is running`);
    expect((body.problems as Json[]).map((x) => [x.name, x.severity])).toEqual([
      ['lookup', 'warning'],
      ['pinned', 'warning'],
    ]);
    expect(lines.some((l) => l.level === 40 && typeof l.msg === 'string' && l.msg.startsWith('MCP discovery failed: cannot reach MCP server'))).toBe(true);

    // Back up: the next retry (1 s) discovers the arguments.
    await server.start();
    await h.waitFor(() => registryOf(h).get('lookup')?.arguments.length === 1, 'the arguments to be discovered after recovery', 10_000);
    expect(sample(await scrape(h.httpUrl()), 'tg_agent_mcp_discovery_failing', { ...p, workspace: h.workspace })).toBe(0);
  });

  it('keeps every secret of an mcp entry off every surface: the listing, metrics, readiness, the log and the audit', async () => {
    server = await startMcpServer({ requireToken: 'the-right-token', tools: { lookup: { input: z.object({ id: z.string() }) } } });
    const gone = await startMcpServer({ tools: {} });
    await gone.stop();
    const secrets = ['USER-s3cret', 'PASS-s3cret', 'QUERY-s3cret', 'TOKEN-s3cret'];
    const withSecrets = (base: string): string => {
      const url = new URL(base);
      url.username = secrets[0]!;
      url.password = secrets[1]!;
      url.searchParams.set('token', secrets[2]!);
      return url.toString();
    };
    const { logger, lines } = capturingLogger();
    const h = await start({ logger, tools: { lookup: mcpTool('lookup', 'lookup-srv', []), gone: mcpTool('gone', 'gone-srv', []) }, script: scripted() });
    // One server is there, the other is not: both failures' messages name the server.
    await h.config.putMany(h.workspace, [
      { type: 'mcp', key: 'lookup-srv', value: { url: withSecrets(server.url), 'remote-name': 'lookup', 'auth-token': secrets[3] } },
      { type: 'mcp', key: 'gone-srv', value: { url: withSecrets(gone.url), 'remote-name': 'gone', 'auth-token': secrets[3] } },
    ]);
    await h.configApplied();
    await h.waitFor(
      () => registryOf(h).mcp.get('lookup')?.discovery === 'failed' && registryOf(h).mcp.get('gone')?.discovery === 'failed',
      'both discoveries to fail',
    );
    expect((await h.ask({ question: 'q' })).last).toMatchObject({ end_of_dialog: true });

    const surfaces: string[] = [];
    const ws = encodeURIComponent(h.workspace);
    for (const path of ['/tools', `/tools/${ws}`, `/workflow/${ws}`, `/workflow/${ws}.json`, `/workflow/${ws}.dot`, '/metrics', '/readyz', '/healthz']) {
      surfaces.push(await (await fetch(`${h.httpUrl()}${path}`)).text());
    }
    surfaces.push(...lines.map((l) => JSON.stringify(l)));
    expect(lines.some((l) => l.audit === 'agent-iteration')).toBe(true);
    const body = await listing(h);
    // The failures are shown, naming each server with its secrets masked.
    const shown = ((body.mcpDiscovery as Json).entries as Json[]).map((e) => [e.key, e.status, String(e.error)]);
    expect(shown).toEqual([
      ['gone-srv', 'failed', expect.stringMatching(/^MCP server http:\/\/\*\*\*@127\.0\.0\.1:\d+\/mcp\?… /)],
      ['lookup-srv', 'failed', expect.stringMatching(/^MCP server http:\/\/\*\*\*@127\.0\.0\.1:\d+\/mcp\?… /)],
    ]);
    for (const secret of secrets) {
      const leaks = surfaces.filter((text) => text.includes(secret) || text.includes(encodeURIComponent(secret)));
      expect(leaks, secret).toEqual([]);
    }
  });

  it('never makes a request wait: a slow server is still pending while the request is answered', async () => {
    server = await startMcpServer({ tools: { slow: { input: z.object({ a: z.string() }) } } });
    server.delayMs = 4_000;
    const h = await start({ tools: { slow: mcpTool('slow', 'slow-srv', []) } }, { mcpDiscoveryTimeoutSeconds: 3 });
    await h.config.put(h.workspace, 'mcp', 'slow-srv', { url: server.url });
    await h.configApplied();
    await h.waitFor(() => server!.listCalls() + server!.requests.length > 0, 'discovery to ask the server');
    const result = await h.ask({ question: 'q' }, { settleMs: 0 });
    expect(result.answer).toBe('ok');
    // Answered while discovery is still pending: the request did not wait for it.
    expect(registryOf(h).mcp.get('slow')?.discovery).toBe('pending');
    await h.waitFor(() => registryOf(h).mcp.get('slow')?.discovery === 'failed', 'the exchange to time out', 10_000);
    expect(registryOf(h).mcp.get('slow')?.reason).toBe('timeout');
  });
});
