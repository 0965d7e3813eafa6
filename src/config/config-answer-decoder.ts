/**
 * Decodes config answers without holding up the event loop: a large one (a `getvalues` of thousands of tools
 * is megabytes; `JSON.parse` and checking it takes tens of milliseconds, and leaves as much garbage) is
 * decoded in a worker thread, a small one here, in a macrotask of its own. The result, and the error for an
 * answer that is not a ConfigResponse, are the same either way. If the worker fails, the answer is decoded
 * here instead, as it would be without a worker; so is a large answer that arrives before the worker has
 * started (the first one usually is the initial load, before any request is served), which starts it.
 *
 * A `getvalues` answer (`values`) comes back from the worker as what changed since the previous answer of
 * the same workspace and type, in chunks (values-delta.ts): with one tool of 10 000 changed, one entry.
 */
import type { Logger } from 'pino';
import { CHEAP_ITEMS_PER_STEP, nextMacrotask, runInSlices, siblingModule, type Steps, WorkerClient } from '../threads/index.js';
import { WireDecodeError } from '../wire/index.js';
import { decodeConfigAnswer, type ConfigAnswer } from './config-answer.js';
import { valuesOf, type ValuesDelta, type ValuesMap } from './values-delta.js';
import { CodedError } from '../errors/index.js';

/** Answers of at least this many bytes are decoded in the worker (10 000 tools: ~3.4 MiB). */
export const OFF_THREAD_BYTES = 256 * 1024;

export type DecodeCall =
  /** Decode a whole answer. */
  | { readonly payload: Uint8Array }
  /** Decode a `getvalues` answer of `stream` relative to the answer of token `base`. */
  | { readonly payload: Uint8Array; readonly stream: string; readonly base: number | undefined }
  /** The next chunk of the changed entries of delta `token`, from string `from` on. */
  | { readonly chunkOf: number; readonly from: number };

export type DecodeResult =
  | { readonly answer: ConfigAnswer }
  | { readonly delta: ValuesDelta }
  | { readonly chunk: readonly string[] }
  /** The chunks of that delta are no longer held (a newer answer replaced them). */
  | { readonly chunkGone: true }
  | { readonly undecodable: { readonly schema: string; readonly detail: string } };

/** A `getvalues` answer: its version and error, and its key → value map. */
export interface ValuesAnswer {
  readonly version: number;
  readonly error: ConfigAnswer['error'];
  readonly values: ValuesMap;
}

/** The worker's answer was not what the call asks for (a worker of another version): decode here instead. */
class UnexpectedAnswer extends CodedError {
  override readonly name = 'UnexpectedAnswer';
  readonly code = 'TG_CONFIG_WORKER_ANSWER_UNEXPECTED';
}

export class ConfigAnswerDecoder {
  private readonly worker: WorkerClient<DecodeCall, DecodeResult>;
  private readonly offThreadBytes: number;
  /** Stream → the map built from its last answer, and that answer's worker token (none: decoded here). */
  private readonly streams = new Map<string, { token: number | undefined; values: ValuesMap }>();

  constructor(
    private readonly logger: Logger,
    options: { offThreadBytes?: number; workerEntry?: URL } = {},
  ) {
    this.offThreadBytes = options.offThreadBytes ?? OFF_THREAD_BYTES;
    this.worker = new WorkerClient(options.workerEntry ?? siblingModule(import.meta.url, 'config-answer-worker'), 'config answer decoding');
  }

  /** @throws WireDecodeError when the payload is not a ConfigResponse */
  async decode(payload: Buffer): Promise<ConfigAnswer> {
    if (this.offThread(payload)) {
      const result = await this.inWorker({ payload }, payload.length);
      if (result && 'answer' in result) {
        // Taking the answer was this macrotask; what the caller does with it goes into the next.
        await nextMacrotask();
        return result.answer;
      }
    }
    await nextMacrotask();
    return decodeConfigAnswer(payload);
  }

  /**
   * The key → value map of a `getvalues` answer of `stream` (a workspace and type): entries without a key
   * left out, a `null` value read as "", the last of a key wins. Unchanged values are the very strings of
   * the previous answer's map.
   * @throws WireDecodeError when the payload is not a ConfigResponse
   */
  async values(payload: Buffer, stream: string): Promise<ValuesAnswer> {
    const previous = this.streams.get(stream);
    if (this.offThread(payload)) {
      const result = await this.inWorker({ payload, stream, base: previous?.token }, payload.length);
      if (result && 'delta' in result) {
        try {
          const values = await this.assemble(result.delta, previous);
          if (!result.delta.error) this.streams.set(stream, { token: result.delta.token, values });
          return { version: result.delta.version, error: result.delta.error, values };
        } catch (error) {
          this.logger.warn({ err: error, bytes: payload.length }, 'Decoding a config answer in a worker failed; decoding it on the event loop instead');
        }
      }
    }
    await nextMacrotask();
    const answer = decodeConfigAnswer(payload);
    const values = mapOf(valuesOf(answer));
    if (answer.error) this.streams.delete(stream);
    else this.streams.set(stream, { token: undefined, values });
    return { version: answer.version, error: answer.error, values };
  }

  /** Forget the last answer of `stream` (its workspace is gone). */
  forget(stream: string): void {
    this.streams.delete(stream);
  }

  /** Start the worker now; resolves once it is ready (tests; otherwise the first large answer starts it). */
  warmUp(): Promise<void> {
    return this.worker.start();
  }

  close(): Promise<void> {
    return this.worker.close();
  }

  /** Large enough for the worker, and it is ready (if not, it starts, and this answer is decoded here). */
  private offThread(payload: Buffer): boolean {
    if (payload.length < this.offThreadBytes) return false;
    if (this.worker.ready) return true;
    this.worker.start().catch((error: unknown) => {
      this.logger.warn({ err: error }, 'The config decoding worker could not start; large config answers are decoded on the event loop');
    });
    return false;
  }

  /**
   * The worker's result; undefined when the worker failed (logged; the caller decodes here).
   * @throws WireDecodeError when the worker found the payload is not a ConfigResponse
   */
  private async inWorker(call: DecodeCall, bytes: number): Promise<DecodeResult | undefined> {
    let result: DecodeResult;
    try {
      // Copied, not moved: the payload stays readable for whoever else holds it.
      result = await this.worker.call(call);
    } catch (error) {
      this.logger.warn({ err: error, bytes }, 'Decoding a config answer in a worker failed; decoding it on the event loop instead');
      return undefined;
    }
    if ('undecodable' in result) {
      await nextMacrotask();
      throw new WireDecodeError(result.undecodable.schema, result.undecodable.detail);
    }
    return result;
  }

  /** The map of `delta` applied to the previous map (or to none), taking the rest of its chunks one macrotask each. */
  private async assemble(delta: ValuesDelta, previous: { token: number | undefined; values: ValuesMap } | undefined): Promise<ValuesMap> {
    const values: Record<string, string> = Object.create(null) as Record<string, string>;
    // Copying 10 000 entries is milliseconds, and more when the thread is preempted: in time slices.
    if (delta.base !== undefined) {
      if (previous?.token !== delta.base) throw new UnexpectedAnswer(`the worker answered relative to answer ${delta.base}, not the one held here`);
      await runInSlices(copyEntries(values, previous.values, delta.removed));
    }
    let changed = delta.changed;
    let from = 0;
    for (;;) {
      await runInSlices(setPairs(values, changed));
      from += changed.length;
      if (from >= delta.changedLength) break;
      const next = await this.worker.call({ chunkOf: delta.token, from });
      if (!('chunk' in next)) throw new UnexpectedAnswer('the worker no longer holds the rest of the answer');
      changed = next.chunk;
    }
    return Object.freeze(values);
  }
}

/** `into` gets every entry of `from` but the `removed` keys, as steps. */
function* copyEntries(into: Record<string, string>, from: ValuesMap, removed: readonly string[]): Steps<void> {
  let n = 0;
  // for…in over a null-prototype object: own keys only.
  for (const key in from) {
    into[key] = from[key]!;
    if (++n % CHEAP_ITEMS_PER_STEP === 0) yield;
  }
  for (let i = 0; i < removed.length; i++) {
    delete into[removed[i]!];
    if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
  }
}

/** `into` gets the pairs of `pairs` (key, value, key, value, ...), as steps. */
function* setPairs(into: Record<string, string>, pairs: readonly string[]): Steps<void> {
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    into[pairs[i]!] = pairs[i + 1]!;
    if ((i + 2) % (2 * CHEAP_ITEMS_PER_STEP) === 0) yield;
  }
}

function mapOf(values: Map<string, string>): ValuesMap {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [key, value] of values) out[key] = value;
  return Object.freeze(out);
}
