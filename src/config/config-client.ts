/**
 * TrustGraph's config service, spoken as its own processors speak it (docs/trustgraph-wire-notes.md §2): ConfigRequest /
 * ConfigResponse on `request:tg:config` / `response:tg:config`, workspace in the message body.
 */
import type { Logger } from 'pino';
import { RequestClient } from '../bus/request-client.js';
import { queueToTopic } from '../bus/topics.js';
import type { Transport } from '../bus/transport.js';
import type { Codec } from '../wire/codec.js';
import {
  configRequestCodec,
  configResponseCodec,
  makeConfigRequest,
  type ConfigRequest,
  type ConfigResponse,
} from '../wire/index.js';
import { ConfigServiceError } from './errors.js';

export interface ConfigClientOptions {
  transport: Transport;
  requestQueue: string;
  responseQueue: string;
  timeoutMs: number;
  logger: Logger;
}

/**
 * Answers reach `call` as received: a `getvalues` answer of 10 000 tools is several MB, and decoding it in the
 * macrotask that received the broker frame would add the two together into one block of the event loop.
 */
const undecoded: Codec<Buffer> = {
  name: 'ConfigResponse',
  encode: (payload) => payload,
  decode: (payload) => (typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload),
};

export class ConfigClient {
  private readonly client: RequestClient<ConfigRequest, Buffer>;

  constructor(options: ConfigClientOptions) {
    this.client = new RequestClient({
      transport: options.transport,
      requestTopic: queueToTopic(options.requestQueue),
      responseTopic: queueToTopic(options.responseQueue),
      requestCodec: configRequestCodec,
      responseCodec: undecoded,
      timeoutMs: options.timeoutMs,
      logger: options.logger,
    });
  }

  start(): Promise<void> {
    return this.client.start();
  }

  close(): Promise<void> {
    return this.client.close();
  }

  /** Workspaces holding at least one key of `type` (reserved `_` workspaces left out), and the version. */
  async workspacesWith(type: string): Promise<{ workspaces: string[]; version: number }> {
    const response = await this.call(makeConfigRequest({ operation: 'getkeys-all-ws', type }));
    const workspaces = new Set<string>();
    for (const value of response.values ?? []) {
      if (value.workspace && !value.workspace.startsWith('_')) workspaces.add(value.workspace);
    }
    return { workspaces: [...workspaces].sort(), version: response.version ?? 0 };
  }

  /** Every key → value of `type` in one workspace, and the version. */
  async values(workspace: string, type: string): Promise<{ values: Record<string, string>; version: number }> {
    const response = await this.call(makeConfigRequest({ operation: 'getvalues', workspace, type }));
    // fromEntries defines own properties: a key "__proto__" is an entry like any other, not the prototype.
    const values: Record<string, string> = Object.fromEntries(
      (response.values ?? []).flatMap((value) => (value.key !== null && value.key !== undefined ? [[value.key, value.value ?? '']] : [])),
    );
    return { values, version: response.version ?? 0 };
  }

  /** Write values (used by tests and the local run; the agent itself only reads). */
  async put(workspace: string, values: { type: string; key: string; value: string }[]): Promise<void> {
    await this.call(
      makeConfigRequest({
        operation: 'put',
        workspace,
        values: values.map((v) => ({ ...v, workspace })),
      }),
    );
  }

  private async call(request: ConfigRequest): Promise<ConfigResponse> {
    const payload = await this.client.request(request);
    await new Promise((resolve) => setImmediate(resolve));
    const response = configResponseCodec.decode(payload);
    if (response.error) {
      throw new ConfigServiceError(
        `config service refused ${request.operation} (workspace "${request.workspace ?? ''}", type "${request.type ?? ''}"): ` +
          `${response.error.type}: ${response.error.message}`,
      );
    }
    return response;
  }
}
