/**
 * TrustGraph's config protocol on the real broker (docs/trustgraph-wire-notes.md §2.3–2.5): the config stand-in answers like
 * config-svc, and the agent follows what it says — tool changes rebuild the registry (seen in
 * `service.registries` and in what the model is shown next), flows appear and disappear with their
 * `processor:agent-manager` entries, and an agent started before the config service answers retries until
 * it does.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { RequestClient } from '../../src/bus/request-client.js';
import { aggregationTopic, flowSubscriptionName, queueToTopic } from '../../src/bus/topics.js';
import type { Consumer } from '../../src/bus/transport.js';
import { WebSocketTransport } from '../../src/bus/pulsar/websocket/websocket-transport.js';
import {
  configPushCodec,
  configRequestCodec,
  configResponseCodec,
  makeConfigRequest,
  type ConfigPush,
  type ConfigRequest,
  type ConfigRequestInput,
  type ConfigResponse,
} from '../../src/wire/index.js';
import { startConfigService, type ConfigServiceStandIn } from '../../dev/stand-ins/config-service.js';
import { offeredToolNames, type PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import {
  AskTimeoutError,
  startAgentHarness,
  waitUntil,
  type AgentHarness,
  type AgentHarnessOptions,
} from '../support/agent-harness.js';
import { agentFlowConfig, knowledgeQueryTool, toolServiceDescriptor, toolServiceQueues, toolServiceTool, uniqueSuffix, uniqueWorkspace } from '../../dev/flow-config.js';
import { untilSubscriptionHasConsumers } from '../support/failure-report.js';
import { brokerUrls } from '../support/transport-contract.js';
import { testTransports } from '../support/transports.js';

const { webSocketUrl, webServiceUrl } = brokerUrls();
const logger = pino({ level: process.env.LOG_LEVEL ?? 'silent' });

describe('config stand-in speaks TrustGraph config protocol (real broker)', () => {
  let transport: WebSocketTransport | undefined;
  let config: ConfigServiceStandIn | undefined;
  let client: RequestClient<ConfigRequest, ConfigResponse> | undefined;
  let pushConsumer: Consumer | undefined;

  afterEach(async () => {
    await client?.close();
    await pushConsumer?.close({ unsubscribe: true });
    await config?.stop();
    await transport?.close();
    client = undefined;
    pushConsumer = undefined;
    config = undefined;
    transport = undefined;
  });

  it('answers every operation and pushes each change', async () => {
    transport = new WebSocketTransport({ url: webSocketUrl, logger });
    const suffix = uniqueSuffix(6);
    const queues = { request: `request:tg:config-${suffix}`, response: `response:tg:config-${suffix}`, push: `notify:tg:config-${suffix}` };
    const pushes: { push: ConfigPush; raw: unknown }[] = [];
    pushConsumer = await transport.subscribe({
      topic: queueToTopic(queues.push),
      subscription: `push-${suffix}`,
      subscriptionType: 'Exclusive',
      handler: async (message) => {
        await message.ack();
        pushes.push({ push: configPushCodec.decode(message.payload), raw: JSON.parse(message.payload.toString()) });
      },
    });
    config = await startConfigService({ transport, queues });
    client = new RequestClient({
      transport,
      requestTopic: queueToTopic(queues.request),
      responseTopic: queueToTopic(queues.response),
      requestCodec: configRequestCodec,
      responseCodec: configResponseCodec,
      timeoutMs: 5_000,
      logger,
    });
    const call = (input: ConfigRequestInput): Promise<ConfigResponse> => client!.request(makeConfigRequest(input));
    const ws1 = uniqueWorkspace();
    const ws2 = uniqueWorkspace();

    // Start-up announcement: empty changes.
    await waitUntil(() => pushes.length >= 1, 'the start-up push');
    expect(pushes[0]?.raw).toEqual({ version: 1, changes: {}, workspace_changes: null });

    const put = await call({
      operation: 'put',
      workspace: ws1,
      values: [
        { type: 'tool', key: 'b', value: '{"name": "b"}' },
        { type: 'tool', key: 'a', value: '{"name": "a"}' },
      ],
    });
    expect(put.error).toBeNull();
    await call({ operation: 'put', workspace: ws2, values: [{ type: 'tool', key: 'c', value: '{"name": "c"}' }] });
    await waitUntil(() => pushes.length >= 3, 'two change pushes');
    expect(pushes[1]?.raw).toEqual({ version: 2, changes: { tool: [ws1] }, workspace_changes: null });
    expect(pushes[2]?.raw).toEqual({ version: 3, changes: { tool: [ws2] }, workspace_changes: null });

    const get = await call({ operation: 'get', workspace: ws1, keys: [{ type: 'tool', key: 'a' }, { type: 'tool', key: 'nope' }] });
    expect(get.version).toBe(3);
    expect(get.values.map((v) => [v.key, v.value])).toEqual([
      ['a', '{"name": "a"}'],
      ['nope', null],
    ]);

    expect((await call({ operation: 'list', workspace: ws1, type: 'tool' })).directory).toEqual(['a', 'b']);
    expect((await call({ operation: 'getvalues', workspace: ws1, type: 'tool' })).values.map((v) => v.key)).toEqual(['a', 'b']);

    const allValues = await call({ operation: 'getvalues-all-ws', type: 'tool' });
    expect(allValues.values.map((v) => [v.workspace, v.key, v.value])).toEqual(
      expect.arrayContaining([
        [ws1, 'a', '{"name": "a"}'],
        [ws1, 'b', '{"name": "b"}'],
        [ws2, 'c', '{"name": "c"}'],
      ]),
    );
    const allKeys = await call({ operation: 'getkeys-all-ws', type: 'tool' });
    expect(allKeys.values).toHaveLength(3);
    expect(allKeys.values.every((v) => v.value === '')).toBe(true);

    const whole = await call({ operation: 'config', workspace: ws1 });
    expect(whole.config).toEqual({ tool: { a: '{"name": "a"}', b: '{"name": "b"}' } });
    expect(whole.version).toBe(3);

    await call({ operation: 'delete', workspace: ws1, keys: [{ type: 'tool', key: 'a' }] });
    expect((await call({ operation: 'list', workspace: ws1, type: 'tool' })).directory).toEqual(['b']);

    // Reserved workspaces change the version but are not announced.
    await call({ operation: 'put', workspace: '__template__', values: [{ type: 'tool', key: 't', value: '{}' }] });
    await waitUntil(() => pushes.length >= 5, 'the delete and reserved-workspace pushes');
    expect(pushes[3]?.raw).toEqual({ version: 4, changes: { tool: [ws1] }, workspace_changes: null });
    expect(pushes[4]?.raw).toEqual({ version: 5, changes: {}, workspace_changes: null });

    // Errors, as config-svc reports them.
    expect((await call({ operation: 'frobnicate', workspace: ws1 })).error?.type).toBe('bad-operation');
    expect((await call({ operation: 'getvalues', type: 'tool' })).error?.type).toBe('bad-request');

    // Direct writes take the same path.
    expect(await config.put(ws1, 'tool-service', 's', { id: 's' })).toBe(6);
    await waitUntil(() => pushes.length >= 6, 'the direct-write push');
    expect(pushes[5]?.push.changes).toEqual({ 'tool-service': [ws1] });
    expect(config.get(ws1, 'tool-service', 's')).toBe('{"id": "s"}');
    expect(config.calls.map((c) => c.operation)).toContain('getkeys-all-ws');
  });
});

describe('the agent follows configuration changes (real broker)', () => {
  let harness: AgentHarness | undefined;

  afterEach(async () => {
    await harness?.stop();
    harness = undefined;
  });

  const start = async (options: Omit<AgentHarnessOptions, 'webSocketUrl'>): Promise<AgentHarness> => {
    harness = await startAgentHarness({ webSocketUrl, ...options });
    return harness;
  };

  const registryNames = (h: AgentHarness): string[] => h.service.registries.get(h.workspace).tools.map((t) => t.name);

  it('a new tool added through the config service is offered on the next request', async () => {
    const h = await start({ tools: { a: knowledgeQueryTool('alpha') } });
    await h.ask({ question: 'first' });
    expect(offeredToolNames(h.prompt.lastReact())).toEqual(['alpha']);

    await h.putTool('b', knowledgeQueryTool('beta', 'Ask about beta'));
    await h.configApplied();
    expect(registryNames(h)).toEqual(['alpha', 'beta']);
    expect(h.service.registries.get(h.workspace).version).toBe(h.config.version);

    await h.ask({ question: 'second' });
    expect(offeredToolNames(h.prompt.lastReact())).toEqual(['alpha', 'beta']);
    expect(h.prompt.lastReact().terms.tool_names).toBe('alpha,beta');
  });

  it('a changed tool is shown as changed; a deleted one disappears', async () => {
    const h = await start({ tools: { a: knowledgeQueryTool('alpha', 'Old description'), b: knowledgeQueryTool('beta') } });
    await h.putTool('a', knowledgeQueryTool('alpha', 'New description', { collection: 'docs' }));
    await h.configApplied();
    const alpha = h.service.registries.get(h.workspace).get('alpha');
    expect(alpha?.description).toBe('New description');
    expect(alpha?.type === 'knowledge-query' ? alpha.collection : undefined).toBe('docs');

    await h.ask({ question: 'q' });
    const tools = h.prompt.lastReact().terms.tools as { name: string; description: string }[];
    expect(tools.find((t) => t.name === 'alpha')?.description).toBe('New description');

    await h.deleteTool('b');
    await h.configApplied();
    expect(registryNames(h)).toEqual(['alpha']);
    await h.ask({ question: 'q2' });
    expect(offeredToolNames(h.prompt.lastReact())).toEqual(['alpha']);
  });

  it('a tool-service-only change keeps the tools, and a tool-only change keeps the tool-service tools', async () => {
    const useJoke = (terms: PromptTerms): string =>
      (terms.history as unknown[]).length === 0
        ? 'Thought: a joke\nAction: joke\nArgs: {"topic": "cats"}'
        : `Thought: done\nFinal Answer: ${(terms.history as { observation: string }[])[0]?.observation ?? ''}`;
    const h = await start({
      script: useJoke,
      toolServices: { jokes: { handler: (args, cfg) => `joke about ${String(args.topic)} (${String(cfg.style)})`, configParams: ['style'] } },
      tools: {
        a: knowledgeQueryTool('alpha'),
        j: toolServiceTool('joke', 'jokes', [{ name: 'topic', type: 'string', description: 'Joke topic' }], 'Tells jokes', {
          style: 'dry',
        }),
      },
    });
    expect(registryNames(h)).toEqual(['alpha', 'joke']);

    // Only `tool-service` changes (TrustGraph would rebuild from that type alone and lose every tool).
    await h.putToolService('other', toolServiceDescriptor({ id: 'other', ...toolServiceQueues(`other-${uniqueSuffix()}`) }));
    await h.configApplied();
    const registry = h.service.registries.get(h.workspace);
    expect(registry.version).toBe(h.config.version);
    expect([...registry.toolServices.keys()].sort()).toEqual(['jokes', 'other']);
    expect(registryNames(h)).toEqual(['alpha', 'joke']);

    // Only `tool` changes (TrustGraph would fail the tool-service tool for want of its descriptor).
    await h.putTool('b', knowledgeQueryTool('beta'));
    await h.configApplied();
    expect(registryNames(h)).toEqual(['alpha', 'beta', 'joke']);

    const result = await h.ask({ question: 'tell me a joke' });
    expect(offeredToolNames(h.prompt.reactCalls()[0]!)).toEqual(['alpha', 'beta', 'joke']);
    expect(result.last.content).toBe('joke about cats (dry)');
    const calls = h.toolServices.jokes?.calls ?? [];
    expect(calls).toHaveLength(1);
    expect(calls[0]?.arguments).toEqual({ topic: 'cats' });
    expect(calls[0]?.config).toEqual({ style: 'dry' });
  });

  it('a second flow is answered on its own topics while configured, and not after it is removed', async () => {
    const h = await start({ tools: { a: knowledgeQueryTool('alpha') } });
    const second = await h.addFlow('second', { script: () => 'Thought: second flow\nFinal Answer: from the second flow' });
    await h.configApplied();
    expect(h.service.runningFlows().map((f) => f.flow).sort()).toEqual(['default', 'second']);

    const answered = await h.ask({ question: 'which flow?' }, { flow: 'second' });
    expect(answered.last).toMatchObject({ message_type: 'answer', content: 'from the second flow', end_of_dialog: true });
    expect(second.prompt.calls).toHaveLength(1);
    expect(h.prompt.calls).toHaveLength(0);
    // Tools are per workspace: the second flow offers the same ones.
    expect(offeredToolNames(second.prompt.lastReact())).toEqual(['alpha']);

    await h.removeFlow('second');
    await h.configApplied();
    expect(h.service.runningFlows().map((f) => f.flow)).toEqual(['default']);

    const unanswered = h.ask({ question: 'anyone there?' }, { flow: 'second', timeoutMs: 3_000 });
    await expect(unanswered).rejects.toBeInstanceOf(AskTimeoutError);
    const error = (await unanswered.catch((e: unknown) => e)) as AskTimeoutError;
    expect(error.responses).toEqual([]);
    expect(second.prompt.calls).toHaveLength(1);

    // The default flow is untouched.
    expect((await h.ask({ question: 'still here?' })).last.content).toBe('ok');
  });

  it('a change announced while the config service cannot answer is fetched once it can', async () => {
    const h = await start({ tools: { a: knowledgeQueryTool('alpha') }, settings: { configTimeoutSeconds: 1 } });
    // The value is stored, then the service stops answering before the agent fetches it.
    await h.putTool('b', knowledgeQueryTool('beta'));
    await h.configApplied();
    h.config.available = false;
    await h.putTool('c', knowledgeQueryTool('gamma'));
    await h.config.push({ version: h.config.version, changes: { tool: [h.workspace] } });
    await h.waitFor(() => !h.service.readiness().ready, 'the agent to report the pending change', 10_000);
    expect(h.service.readiness().detail).toContain(`configuration changes not fetched yet for: ${h.workspace}`);
    expect(registryNames(h)).toEqual(['alpha', 'beta']);

    h.config.available = true;
    await h.waitFor(() => registryNames(h).includes('gamma'), 'the pending change to be fetched', 15_000);
    expect(registryNames(h)).toEqual(['alpha', 'beta', 'gamma']);
    await h.waitReady(10_000);
  });

  it('started while the config service does not answer, the agent retries and becomes ready once it does', async () => {
    const h = await start({
      tools: { a: knowledgeQueryTool('alpha') },
      configAvailable: false,
      waitReady: false,
      settings: { configTimeoutSeconds: 1 },
    });
    await h.waitFor(() => h.config.calls.length >= 2, 'a second config attempt', 15_000);
    expect(h.service.readiness()).toEqual({
      ready: false,
      detail: expect.stringMatching(/^configuration not loaded yet: waiting for TrustGraph's config service: no response to request \S+ on \S+config\S* within 1000 ms$/),
    });
    expect(h.service.runningFlows()).toEqual([]);
    expect(h.config.calls.every((c) => c.operation === 'getkeys-all-ws')).toBe(true);

    h.config.available = true;
    await h.started;
    await h.waitReady(15_000);
    expect(h.service.runningFlows().map((f) => f.flow)).toEqual(['default']);
    expect(registryNames(h)).toEqual(['alpha']);

    const result = await h.ask({ question: 'are you up?' });
    expect(result.last).toMatchObject({ message_type: 'answer', content: 'ok', end_of_dialog: true });
    expect(offeredToolNames(h.prompt.lastReact())).toEqual(['alpha']);
  });
});

describe.each(testTransports())('a changed flow restarts on the real broker [%s]', (transportKind) => {
  let harness: AgentHarness | undefined;

  afterEach(async () => {
    await harness?.stop();
    harness = undefined;
  });

  // Before the old runtime's consumers close, the new runtime's have joined: the broker never sees the
  // subscription empty, so it neither drops requests in between nor removes the subscription under the new
  // consumers (which it does after answering the last close: they would stay connected and receive nothing).
  it('keeps its request and aggregation subscriptions through every restart, and answers after each', async () => {
    const consumers = 2;
    const h = await startAgentHarness({ transport: transportKind, webSocketUrl, settings: { requestConsumers: consumers } });
    harness = h;
    const processorId = h.flowConfigType.slice('processor:'.length);
    const requestTopic = queueToTopic(h.service.runningFlows()[0]!.topics.request!);
    const subscription = (spec: string) => flowSubscriptionName(processorId, h.workspace, h.flow, spec);
    const restarts = 8;
    for (let i = 1; i <= restarts; i++) {
      const explainability = `flow:tg:triples-store:${h.workspace}:restart-${i}`;
      // A changed topic restarts the flow (the librarian queues stay out, as in the harness's flow).
      await h.config.put(
        h.workspace,
        h.flowConfigType,
        h.flow,
        agentFlowConfig(h.workspace, h.flow, { topics: { explainability, 'librarian-request': undefined, 'librarian-response': undefined } }),
      );
      await h.waitFor(() => h.service.runningFlows()[0]?.topics.explainability === explainability, `restart ${i}`, 15_000);
      await untilSubscriptionHasConsumers(webServiceUrl, requestTopic, subscription('request'), consumers, 15_000);
      await untilSubscriptionHasConsumers(webServiceUrl, aggregationTopic(requestTopic), subscription('aggregation'), 1, 15_000);
      const answered = await h.ask({ question: `after restart ${i}` });
      expect(answered.last).toMatchObject({ message_type: 'answer', content: 'ok', end_of_dialog: true });
    }
    expect(h.prompt.calls).toHaveLength(restarts);
  });
});
