/**
 * TrustGraph's config service, spoken as its own processors speak it (docs/trustgraph-wire-notes.md §2): ConfigRequest /
 * ConfigResponse on `request:tg:config` / `response:tg:config`, workspace in the message body.
 */
import type { Logger } from 'pino';
import { queueToTopic, RequestClient, type Transport } from '../bus/index.js';
import { type Codec, type ConfigRequest, configRequestCodec, makeConfigRequest } from '../wire/index.js';
import { FIELDS_PER_ENTRY, type ConfigAnswer } from './config-answer.js';
import { ConfigAnswerDecoder } from './config-answer-decoder.js';
import { ConfigServiceError } from './errors.js';
import { nextMacrotask } from '../threads/index.js';

export interface CallOptions {
  /** This call's timeout instead of the client's. */
  timeoutMs?: number;
}

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

/** From answers this large (~1 000 tools) on, taking the values and using them are split into two macrotasks. */
const MANY_VALUES_BYTES = 256 * 1024;

export class ConfigClient {
  private readonly client: RequestClient<ConfigRequest, Buffer>;
  private readonly decoder: ConfigAnswerDecoder;

  /** The timeout of a call that names none (`--config-timeout`). */
  readonly timeoutMs: number;

  constructor(options: ConfigClientOptions) {
    this.timeoutMs = options.timeoutMs;
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
  async workspacesWith(type: string, options: CallOptions = {}): Promise<{ workspaces: string[]; version: number }> {
    const answer = await this.call(makeConfigRequest({ operation: 'getkeys-all-ws', type }), options);
    const workspaces = new Set<string>();
    const { entries } = answer;
    for (let i = 3; i < entries.length; i += FIELDS_PER_ENTRY) {
      const workspace = entries[i];
      if (workspace && !workspace.startsWith('_')) workspaces.add(workspace);
    }
    return { workspaces: [...workspaces].sort(), version: answer.version };
  }

  /**
   * Every key → value of `type` in one workspace (frozen, null prototype: a key "__proto__" is an entry like
   * any other), and the version. Values unchanged since the previous call for this workspace and type are
   * the same strings as then.
   */
  async values(workspace: string, type: string, options: CallOptions = {}): Promise<{ values: Readonly<Record<string, string>>; version: number }> {
    const request = makeConfigRequest({ operation: 'getvalues', workspace, type });
    const payload = await this.client.request(request, options);
    const answer = await this.decoder.values(payload, streamOf(workspace, type));
    if (answer.error) throw refused(request, answer.error);
    // With thousands of values, the caller's work on them (the workspace snapshot, the registry build) goes into a macrotask of its own.
    if (payload.length >= MANY_VALUES_BYTES) await nextMacrotask();
    return { values: answer.values, version: answer.version };
  }

  /** Forget what was kept of a workspace's previous answers (the workspace is gone). */
  forget(workspace: string, types: readonly string[]): void {
    for (const type of types) this.decoder.forget(streamOf(workspace, type));
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

  private async call(request: ConfigRequest, options: CallOptions = {}): Promise<ConfigAnswer> {
    const payload = await this.client.request(request, options);
    const response = await this.decoder.decode(payload);
    if (response.error) throw refused(request, response.error);
    return response;
  }
}

function refused(request: ConfigRequest, error: NonNullable<ConfigAnswer['error']>): ConfigServiceError {
  return new ConfigServiceError(
    `config service refused ${request.operation} (workspace "${request.workspace ?? ''}", type "${request.type ?? ''}"): ` +
      `${error.type}: ${error.message}`,
  );
}

/** The decoder's name for the answers of one workspace and type (NUL: in neither name). */
function streamOf(workspace: string, type: string): string {
  return `${workspace}\u0000${type}`;
}
