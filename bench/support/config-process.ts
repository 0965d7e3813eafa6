/**
 * TrustGraph's config service for the reload benchmark, in its own process: encoding a response of
 * 10 000 tools (several MB) takes long enough to stall whatever event loop does it, and that must be
 * neither the agent's nor the load generator's (their latencies are what is measured).
 *
 * It speaks the real wire format with the project's codecs (ConfigRequest / ConfigResponse / ConfigPush),
 * answering the two operations the agent uses: `getkeys-all-ws` and `getvalues`. On `{type: 'reload', kind}` over
 * IPC it bumps the version, encodes the `getvalues` answer for `tool` *before* announcing the change (so that
 * cost falls outside the agent's reload), and publishes a push:
 *
 *  - `all` (default) / `one`: replaces every `tool` value, or only the first (alternating two revisions of the
 *    synthetic tools) — `changedPerReload` overrides how many; push `{changes: {tool: [workspace]}}`;
 *  - `first`: a workspace the agent has never seen (`<workspace>-fresh-<n>`) with all the tools, the previous
 *    such workspace deleted in the same push — the agent builds a registry of every tool from nothing, as on
 *    its first load, while the conversations go on in the main workspace.
 *
 * IPC: parent → `{type: 'init', ...InitMessage}`, `{type: 'reload', kind}`; child → `{type: 'ready'}`, `{type: 'reloaded'}`.
 */
import { queueToTopic } from '../../src/bus/topics.js';
import { WebSocketTransport } from '../../src/bus/pulsar/websocket/websocket-transport.js';
import {
  configPushCodec,
  configRequestCodec,
  configResponseCodec,
  makeConfigPush,
  makeConfigResponse,
  type ConfigRequest,
} from '../../src/wire/index.js';
import { syntheticTools } from './tools.js';

export interface InitMessage {
  type: 'init';
  webSocketUrl: string;
  maxFrameBytes: number;
  queues: { request: string; response: string; push: string };
  workspace: string;
  /** Values other than the synthetic tools (flow config, the benchmark's own tool), value = JSON string. */
  entries: { type: string; key: string; value: string }[];
  toolCount: number;
  /** Tools whose value each reload changes (the first ones by key); default all of them. */
  changedPerReload?: number;
}

/** What a reload changes (see the top of this file). */
export type ReloadKind = 'first' | 'one' | 'all';

export interface ReloadedMessage {
  type: 'reloaded';
  version: number;
  /** Time to encode the `getvalues tool` answer, ms (before the push). */
  encodeMs: number;
  /** Size of that answer's payload, bytes. */
  payloadBytes: number;
}

async function main(init: InitMessage): Promise<void> {
  const transport = new WebSocketTransport({ url: init.webSocketUrl, maxFrameBytes: init.maxFrameBytes });
  /** type → key → value, one workspace. */
  const store = new Map<string, Map<string, string>>();
  const put = (type: string, key: string, value: string): void => {
    let keys = store.get(type);
    if (!keys) store.set(type, (keys = new Map()));
    keys.set(key, value);
  };
  for (const entry of init.entries) put(entry.type, entry.key, entry.value);
  let revision = 0;
  let fresh: string | undefined;
  let freshCount = 0;
  const setTools = (kind: ReloadKind = 'all'): void => {
    const changed = revision === 0 ? init.toolCount : (init.changedPerReload ?? (kind === 'one' ? 1 : init.toolCount));
    const entries = Object.entries(syntheticTools(init.toolCount, revision)).sort(([a], [b]) => (a < b ? -1 : 1));
    for (const [key, value] of entries.slice(0, changed)) put('tool', key, value);
  };
  setTools();
  let version = 1;

  const encodeValues = (type: string): Buffer => {
    const keys = store.get(type) ?? new Map<string, string>();
    return configResponseCodec.encode(
      makeConfigResponse({
        version,
        values: [...keys.keys()].sort().map((key) => ({ type, key, value: keys.get(key) ?? '', workspace: '' })),
      }),
    );
  };
  let toolAnswer: { version: number; payload: Buffer } | undefined;
  const encodeTools = (): number => {
    const started = performance.now();
    toolAnswer = { version, payload: encodeValues('tool') };
    return performance.now() - started;
  };
  encodeTools();

  const answer = (request: ConfigRequest): Buffer => {
    switch (request.operation) {
      case 'getkeys-all-ws':
        return configResponseCodec.encode(
          makeConfigResponse({
            version,
            values: [...(store.get(request.type)?.keys() ?? [])].sort().map((key) => ({ type: request.type, key, value: '', workspace: init.workspace })),
          }),
        );
      case 'getvalues':
        if (request.type === 'tool' && request.workspace === fresh && toolAnswer?.version === version) return toolAnswer.payload;
        if (request.workspace !== init.workspace) return configResponseCodec.encode(makeConfigResponse({ version, values: [] }));
        if (request.type === 'tool' && toolAnswer?.version === version) return toolAnswer.payload;
        return encodeValues(request.type);
      default:
        return configResponseCodec.encode(
          makeConfigResponse({ version: 0, error: { type: 'bad-operation', message: `Bad operation: ${request.operation}` } }),
        );
    }
  };

  const responses = await transport.createProducer(queueToTopic(init.queues.response));
  const pushes = await transport.createProducer(queueToTopic(init.queues.push));
  await transport.subscribe({
    topic: queueToTopic(init.queues.request),
    subscription: 'config-svc',
    subscriptionType: 'Shared',
    handler: async (message) => {
      await message.ack();
      const request = configRequestCodec.decode(message.payload);
      await responses.send({ payload: answer(request), properties: { id: message.properties.id ?? '' } });
    },
  });

  process.on('message', (message: { type: string; kind?: ReloadKind }) => {
    if (message?.type !== 'reload') return;
    void (async () => {
      const kind = message.kind ?? 'all';
      const gone = fresh;
      if (kind === 'first') fresh = `${init.workspace}-fresh-${++freshCount}`;
      else {
        revision = revision === 1 ? 2 : 1;
        setTools(kind);
      }
      version += 1;
      const encodeMs = encodeTools();
      const push =
        kind === 'first'
          ? makeConfigPush({ version, changes: { tool: [fresh!] }, workspace_changes: { created: [fresh!], deleted: gone ? [gone] : [] } })
          : makeConfigPush({ version, changes: { tool: [init.workspace] }, workspace_changes: null });
      await pushes.send({ payload: configPushCodec.encode(push), properties: {} });
      const reply: ReloadedMessage = { type: 'reloaded', version, encodeMs, payloadBytes: toolAnswer?.payload.length ?? 0 };
      process.send?.(reply);
    })();
  });
  process.send?.({ type: 'ready', version, payloadBytes: toolAnswer?.payload.length ?? 0 });
  const stop = (): void => {
    void transport.close().finally(() => process.exit(0));
  };
  process.on('disconnect', stop);
  process.on('SIGTERM', stop);
}

process.once('message', (message: InitMessage) => {
  if (message?.type !== 'init') return;
  main(message).catch((error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  });
});
