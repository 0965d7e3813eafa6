/**
 * Decodes config answers without holding up the event loop: a large one (a `getvalues` of thousands of tools
 * is megabytes; `JSON.parse` and checking it takes tens of milliseconds, and leaves as much garbage) is
 * decoded in a worker thread, a small one here, in a macrotask of its own. The result, and the error for an
 * answer that is not a ConfigResponse, are the same either way. If the worker fails, the answer is decoded
 * here instead, as it would be without a worker; so is a large answer that arrives before the worker has
 * started (the first one usually is the initial load, before any request is served), which starts it.
 */
import type { Logger } from 'pino';
import { nextMacrotask } from '../threads/next-macrotask.js';
import { siblingModule, WorkerClient } from '../threads/worker-client.js';
import { WireDecodeError } from '../wire/errors.js';
import { decodeConfigAnswer, type ConfigAnswer } from './config-answer.js';

/** Answers of at least this many bytes are decoded in the worker (10 000 tools: ~3.4 MiB). */
export const OFF_THREAD_BYTES = 256 * 1024;

export interface DecodeCall {
  readonly payload: Uint8Array;
}

export type DecodeResult = { readonly answer: ConfigAnswer } | { readonly undecodable: { readonly schema: string; readonly detail: string } };

export class ConfigAnswerDecoder {
  private readonly worker: WorkerClient<DecodeCall, DecodeResult>;

  constructor(
    private readonly logger: Logger,
    options: { offThreadBytes?: number; workerEntry?: URL } = {},
  ) {
    this.offThreadBytes = options.offThreadBytes ?? OFF_THREAD_BYTES;
    this.worker = new WorkerClient(options.workerEntry ?? siblingModule(import.meta.url, 'config-answer-worker'), 'config answer decoding');
  }

  private readonly offThreadBytes: number;

  /** @throws WireDecodeError when the payload is not a ConfigResponse */
  async decode(payload: Buffer): Promise<ConfigAnswer> {
    if (payload.length >= this.offThreadBytes && !this.worker.ready) this.worker.start().catch(() => {});
    else if (payload.length >= this.offThreadBytes) {
      let result: DecodeResult | undefined;
      try {
        // Copied, not moved: the payload stays readable for whoever else holds it.
        result = await this.worker.call({ payload });
      } catch (error) {
        this.logger.warn({ err: error, bytes: payload.length }, 'Decoding a config answer in a worker failed; decoding it on the event loop instead');
      }
      // Taking the answer (deserializing 40 000 strings for 10 000 tools) was this macrotask; what the caller
      // does with it goes into the next.
      if (result) await nextMacrotask();
      if (result && 'answer' in result) return result.answer;
      if (result) throw new WireDecodeError(result.undecodable.schema, result.undecodable.detail);
    }
    await nextMacrotask();
    return decodeConfigAnswer(payload);
  }

  /** Start the worker now; resolves once it is ready (tests; otherwise the first large answer starts it). */
  warmUp(): Promise<void> {
    return this.worker.start();
  }

  close(): Promise<void> {
    return this.worker.close();
  }
}
