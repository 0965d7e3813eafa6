/**
 * TrustGraph's config service, spoken as its own processors speak it (docs/trustgraph-wire-notes.md §2): ConfigRequest /
 * ConfigResponse on `request:tg:config` / `response:tg:config`, workspace in the message body.
 */
import type { Logger } from 'pino';
import { RequestClient } from '../bus/request-client.js';
import { queueToTopic } from '../bus/topics.js';
import type { Transport } from '../bus/transport.js';
import type { Codec } from '../wire/codec.js';
import { configRequestCodec, makeConfigRequest, type ConfigRequest } from '../wire/index.js';
import { FIELDS_PER_ENTRY, type ConfigAnswer } from './config-answer.js';
import { ConfigAnswerDecoder } from './config-answer-decoder.js';
import { ConfigServiceError } from './errors.js';
import { nextMacrotask } from '../threads/next-macrotask.js';

export interface ConfigClientOptions {
  transport: Transport;
  requestQueue: string;
  responseQueue: string;
  timeoutMs: number;
  logger: Logger;
}

/**
 * Answers reach `call` as received: a `getvalues` answer of 10 000 tools is several MB, decoded off the event
 * loop (config-answer-decoder.ts), never in the macrotask that received the broker frame.
 */
const undecoded: Codec<Buffer> = {
  name: 'ConfigResponse',
  encode: (payload) => payload,
  decode: (payload) => (typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload),
};

/** Above this many values, building the key map and using it are split into two macrotasks. */
const MANY_VALUES = 1000;

export class ConfigClient {
  private readonly client: RequestClient<ConfigRequest, Buffer>;
  private readonly decoder: ConfigAnswerDecoder;

  constructor(options: ConfigClientOptions) {
    this.decoder = new ConfigAnswerDecoder(options.logger);
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

  async close(): Promise<void> {
    await Promise.all([this.client.close(), this.decoder.close()]);
  }

  /** Workspaces holding at least one key of `type` (reserved `_` workspaces left out), and the version. */
  async workspacesWith(type: string): Promise<{ workspaces: string[]; version: number }> {
    const answer = await this.call(makeConfigRequest({ operation: 'getkeys-all-ws', type }));
    const workspaces = new Set<string>();
    const { entries } = answer;
    for (let i = 3; i < entries.length; i += FIELDS_PER_ENTRY) {
      const workspace = entries[i];
      if (workspace && !workspace.startsWith('_')) workspaces.add(workspace);
    }
    return { workspaces: [...workspaces].sort(), version: answer.version };
  }

  /** Every key → value of `type` in one workspace, and the version. */
  async values(workspace: string, type: string): Promise<{ values: Record<string, string>; version: number }> {
    const answer = await this.call(makeConfigRequest({ operation: 'getvalues', workspace, type }));
    // A null prototype: a key "__proto__" is an entry like any other, not the prototype.
    const values: Record<string, string> = Object.create(null) as Record<string, string>;
    const { entries } = answer;
    for (let i = 1; i < entries.length; i += FIELDS_PER_ENTRY) {
      const key = entries[i];
      if (key !== null && key !== undefined) values[key] = entries[i + 1] ?? '';
    }
    // With thousands of values, the caller's work on them (the workspace snapshot, the registry build) goes into a macrotask of its own.
    if (entries.length > MANY_VALUES * FIELDS_PER_ENTRY) await nextMacrotask();
    return { values, version: answer.version };
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

  private async call(request: ConfigRequest): Promise<ConfigAnswer> {
    const payload = await this.client.request(request);
    const response = await this.decoder.decode(payload);
    if (response.error) {
      throw new ConfigServiceError(
        `config service refused ${request.operation} (workspace "${request.workspace ?? ''}", type "${request.type ?? ''}"): ` +
          `${response.error.type}: ${response.error.message}`,
      );
    }
    return response;
  }
}
