/**
 * TrustGraph's config service (`config-svc`, docs/trustgraph-wire-notes.md §2) as an in-memory stand-in on the real broker:
 * rows (workspace, type, key) → value with one global version, ConfigRequest/ConfigResponse on
 * `request:tg:config` / `response:tg:config` (workspace in the body), and a ConfigPush on `notify:tg:config`
 * after every put/delete (`{version, changes: {type: [workspaces]}, workspace_changes: null}`; changes in
 * reserved `_` workspaces are not announced). Like the real service it announces itself once at start with
 * an empty `changes` map.
 *
 * The direct methods (`put`, `delete`, `putMany`, `deleteMany`) go through the same code path as bus
 * requests, so they bump the version and push. With `available = false` the service is "down": bus
 * requests are recorded but not answered, and no pushes are published (the store still changes).
 */
import { queueToTopic } from '../../src/bus/topics.js';
import type { Producer, Transport } from '../../src/bus/transport.js';
import { pythonJsonDumps, type ConfigPush, type ConfigPushInput, type ConfigRequest, type ConfigResponse, type ConfigValueInput } from '../../src/wire/index.js';
import * as configWire from '../../src/wire/config.js';
import { startStandIn, type ServiceStandIn } from './service-stand-in.js';

export const TRUSTGRAPH_CONFIG_QUEUES = {
  request: 'request:tg:config',
  response: 'response:tg:config',
  push: 'notify:tg:config',
} as const;

export interface ConfigQueues {
  request: string;
  response: string;
  push: string;
}

export interface ConfigServiceOptions {
  transport: Transport;
  /** Default: TrustGraph's system queues. Tests use their own to stay isolated. */
  queues?: ConfigQueues;
  /** Version before the first change. Default 0 (the start announcement makes it 1). */
  initialVersion?: number;
  /** Start unavailable ("config service absent"). Default true. */
  available?: boolean;
  /** Publish the start-up push (empty `changes`). Default true. */
  announce?: boolean;
}

/** A value to store: a string as-is, anything else JSON-encoded as Python's json.dumps writes it. */
export type ConfigInputValue = string | object;

export interface ConfigEntry {
  type: string;
  key: string;
  value: ConfigInputValue;
}

export interface ConfigServiceStandIn {
  readonly queues: ConfigQueues;
  /** The global version (bumped by every put/delete and by the start announcement). */
  readonly version: number;
  /** Every ConfigRequest received over the bus (answered or not). */
  readonly calls: ConfigRequest[];
  /** Every push published, in order. */
  readonly pushes: ConfigPush[];
  available: boolean;
  put(workspace: string, type: string, key: string, value: ConfigInputValue): Promise<number>;
  putMany(workspace: string, entries: readonly ConfigEntry[]): Promise<number>;
  delete(workspace: string, type: string, key: string): Promise<number>;
  deleteMany(workspace: string, keys: readonly { type: string; key: string }[]): Promise<number>;
  /** The stored value, or undefined. */
  get(workspace: string, type: string, key: string): string | undefined;
  /** key → value of one type in one workspace. */
  values(workspace: string, type: string): Record<string, string>;
  /** Publish any push (e.g. a workspace deletion). */
  push(push: ConfigPushInput): Promise<void>;
  /** Publish raw bytes on the push topic (malformed-input tests). */
  pushRaw(payload: Buffer | string): Promise<void>;
  /** Run one request as if it came over the bus (writes bump the version and push). */
  request(request: ConfigRequest): Promise<ConfigResponse>;
  /**
   * Also answer on the workspace's own queues (`<request queue>:<workspace>`), as TrustGraph 2.11's config
   * service does for every workspace: the gateway's config API (`tg-show-config`, ...) asks there, and the
   * workspace is the queue's, whatever the request says.
   */
  serveWorkspace(workspace: string): Promise<void>;
  stop(): Promise<void>;
}

const WORKSPACE_SCOPED = new Set(['get', 'list', 'getvalues', 'put', 'delete', 'config']);

function encodeValue(value: ConfigInputValue): string {
  return typeof value === 'string' ? value : pythonJsonDumps(value);
}

function sortedKeys<T>(map: ReadonlyMap<string, T>): string[] {
  return [...map.keys()].sort();
}

export async function startConfigService(options: ConfigServiceOptions): Promise<ConfigServiceStandIn> {
  const { transport } = options;
  const queues = options.queues ?? { ...TRUSTGRAPH_CONFIG_QUEUES };
  /** workspace → type → key → value */
  const store = new Map<string, Map<string, Map<string, string>>>();
  let version = options.initialVersion ?? 0;
  const pushes: ConfigPush[] = [];
  let pushProducer: Producer | undefined;
  let available = options.available ?? true;

  const typeMap = (workspace: string, type: string, create: boolean): Map<string, string> | undefined => {
    let types = store.get(workspace);
    if (!types) {
      if (!create) return undefined;
      types = new Map();
      store.set(workspace, types);
    }
    let keys = types.get(type);
    if (!keys) {
      if (!create) return undefined;
      keys = new Map();
      types.set(type, keys);
    }
    return keys;
  };

  const publishPush = async (push: ConfigPush): Promise<void> => {
    if (!available || !pushProducer) return;
    pushes.push(push);
    await pushProducer.send({ payload: configWire.configPushCodec.encode(push), properties: {} });
  };

  /** Bump the version and announce the change (types → this workspace unless reserved). */
  const changed = async (workspace: string, types: readonly string[]): Promise<void> => {
    version += 1;
    const changes: Record<string, string[]> = {};
    if (!workspace.startsWith('_')) for (const type of new Set(types)) changes[type] = [workspace];
    await publishPush(configWire.makeConfigPush({ version, changes, workspace_changes: null }));
  };

  const error = (type: string, message: string): ConfigResponse =>
    configWire.makeConfigResponse({ version: 0, error: { type, message } });

  /** The pure part of every operation; returns the response and the types a write touched. */
  const apply = (request: ConfigRequest): { response: ConfigResponse; wrote?: { workspace: string; types: string[] } } => {
    const { operation, workspace } = request;
    const known = WORKSPACE_SCOPED.has(operation) || operation === 'getvalues-all-ws' || operation === 'getkeys-all-ws';
    if (!known) return { response: error('bad-operation', `Bad operation: ${operation}`) };
    if (WORKSPACE_SCOPED.has(operation) && !workspace) {
      return { response: error('bad-request', `Operation ${operation} requires a workspace`) };
    }
    switch (operation) {
      case 'get':
        return {
          response: configWire.makeConfigResponse({
            version,
            values: request.keys.map((k) => ({
              type: k.type,
              key: k.key,
              value: typeMap(workspace, k.type, false)?.get(k.key) ?? null,
              workspace,
            })),
          }),
        };
      case 'list':
        return {
          response: configWire.makeConfigResponse({
            version,
            directory: sortedKeys(typeMap(workspace, request.type, false) ?? new Map()),
          }),
        };
      case 'getvalues': {
        const keys = typeMap(workspace, request.type, false) ?? new Map<string, string>();
        return {
          response: configWire.makeConfigResponse({
            version,
            values: sortedKeys(keys).map((key) => ({ type: request.type, key, value: keys.get(key) ?? '', workspace: '' })),
          }),
        };
      }
      case 'getvalues-all-ws':
      case 'getkeys-all-ws': {
        const values: ConfigValueInput[] = [];
        for (const ws of sortedKeys(store)) {
          const keys = typeMap(ws, request.type, false);
          if (!keys) continue;
          for (const key of sortedKeys(keys)) {
            values.push({
              type: request.type,
              key,
              value: operation === 'getvalues-all-ws' ? (keys.get(key) ?? '') : '',
              workspace: ws,
            });
          }
        }
        return { response: configWire.makeConfigResponse({ version, values }) };
      }
      case 'config': {
        const config: Record<string, Record<string, string>> = {};
        for (const [type, keys] of store.get(workspace) ?? new Map<string, Map<string, string>>()) {
          config[type] = Object.fromEntries(sortedKeys(keys).map((key) => [key, keys.get(key) ?? '']));
        }
        return { response: configWire.makeConfigResponse({ version, config }) };
      }
      case 'put':
        for (const value of request.values) typeMap(workspace, value.type, true)?.set(value.key, value.value ?? '');
        return { response: configWire.makeConfigResponse({}), wrote: { workspace, types: request.values.map((v) => v.type) } };
      case 'delete':
        for (const key of request.keys) typeMap(workspace, key.type, false)?.delete(key.key);
        return { response: configWire.makeConfigResponse({}), wrote: { workspace, types: request.keys.map((k) => k.type) } };
    }
    return { response: error('bad-operation', `Bad operation: ${operation}`) };
  };

  const execute = async (request: ConfigRequest): Promise<ConfigResponse> => {
    const { response, wrote } = apply(request);
    if (wrote) await changed(wrote.workspace, wrote.types);
    return response;
  };

  pushProducer = await transport.createProducer(queueToTopic(queues.push));
  let bus: ServiceStandIn<ConfigRequest, ConfigResponse>;
  try {
    bus = await startStandIn<ConfigRequest, ConfigResponse>({
      transport,
      requestQueue: queues.request,
      responseQueue: queues.response,
      requestCodec: configWire.configRequestCodec,
      responseCodec: configWire.configResponseCodec,
      name: 'config',
      subscription: 'config-svc',
      handle: (request) => execute(request),
      errorReply: (message) => error('config-error', message),
    });
  } catch (err) {
    await pushProducer.close().catch(() => undefined);
    throw err;
  }
  bus.available = available;
  const workspaceBuses: ServiceStandIn<ConfigRequest, ConfigResponse>[] = [];

  const service: ConfigServiceStandIn = {
    queues,
    get version() {
      return version;
    },
    calls: bus.calls,
    pushes,
    get available() {
      return available;
    },
    set available(value: boolean) {
      available = value;
      bus.available = value;
    },
    put: (workspace, type, key, value) => service.putMany(workspace, [{ type, key, value }]),
    async putMany(workspace, entries) {
      await execute(
        configWire.makeConfigRequest({
          operation: 'put',
          workspace,
          values: entries.map((e) => ({ type: e.type, key: e.key, value: encodeValue(e.value), workspace })),
        }),
      );
      return version;
    },
    delete: (workspace, type, key) => service.deleteMany(workspace, [{ type, key }]),
    async deleteMany(workspace, keys) {
      await execute(configWire.makeConfigRequest({ operation: 'delete', workspace, keys: [...keys] }));
      return version;
    },
    get: (workspace, type, key) => typeMap(workspace, type, false)?.get(key),
    values: (workspace, type) => Object.fromEntries(typeMap(workspace, type, false) ?? []),
    async push(push) {
      const message = configWire.makeConfigPush(push);
      pushes.push(message);
      await pushProducer?.send({ payload: configWire.configPushCodec.encode(message), properties: {} });
    },
    async pushRaw(payload) {
      await pushProducer?.send({ payload: typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload, properties: {} });
    },
    request: (request) => execute(request),
    async serveWorkspace(workspace) {
      const scoped = await startStandIn<ConfigRequest, ConfigResponse>({
        transport,
        requestQueue: `${queues.request}:${workspace}`,
        responseQueue: `${queues.response}:${workspace}`,
        requestCodec: configWire.configRequestCodec,
        responseCodec: configWire.configResponseCodec,
        name: `config:${workspace}`,
        subscription: 'config-svc',
        handle: (request) => execute({ ...request, workspace }),
        errorReply: (message) => error('config-error', message),
      });
      workspaceBuses.push(scoped);
    },
    async stop() {
      await Promise.allSettled([bus.stop(), ...workspaceBuses.map((b) => b.stop()), pushProducer?.close()]);
      pushProducer = undefined;
    },
  };

  if (options.announce ?? true) {
    version += 1;
    await publishPush(configWire.makeConfigPush({ version, changes: {}, workspace_changes: null }));
  }
  return service;
}
