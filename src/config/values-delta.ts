/**
 * A `getvalues` answer as the change since the previous answer of the same stream (one workspace, one config
 * type), so that a push which changed one of 10 000 tools moves one entry from the decoding worker to the
 * event loop instead of 10 000 (each a string the event loop would allocate, and its garbage collector copy).
 *
 * The worker (`ValuesDiffer`, config-answer-worker.ts) keeps the key → value map of the last answer of each
 * stream under a token; the event loop keeps the map it built from that answer under the same token and
 * names it as the base of its next call. The worker answers relative to that base only when it still holds
 * it; otherwise (first answer, worker restarted, the event loop decoded the previous answer itself) with
 * every entry. Either way the event loop ends up with exactly the map decoding the whole answer gives.
 *
 * A delta of many entries comes in chunks (`CHUNK_PAIRS` each, one message and so one macrotask each): the
 * structured clone of the whole of it would be one long block on the event loop.
 */
import type { ConfigResponse } from '../wire/index.js';
import { FIELDS_PER_ENTRY, type ConfigAnswer } from './config-answer.js';

/** Key, value pairs per chunk: ~1 000 tools, ~340 KiB of strings to take in one macrotask. */
export const CHUNK_PAIRS = 1000;

/** Streams the worker remembers (least recently used forgotten first): workspaces × watched types. */
export const REMEMBERED_STREAMS = 64;

export interface ValuesDelta {
  readonly version: number;
  readonly error: ConfigResponse['error'];
  /** This answer's token: the base of the stream's next call. */
  readonly token: number;
  /** The token this delta is relative to; undefined: `changed` holds every entry (start from nothing). */
  readonly base: number | undefined;
  /** Keys gone since the base. */
  readonly removed: readonly string[];
  /** The first chunk of the entries added or changed since the base: key, value, key, value, ... */
  readonly changed: readonly string[];
  /** Strings in `changed` over every chunk (twice the entries); the rest come from `ValuesDiffer.chunk`. */
  readonly changedLength: number;
}

/** Key → value of a `getvalues` answer, as the config client gives it: null prototype, frozen. */
export type ValuesMap = Readonly<Record<string, string>>;

/** The map an answer gives: entries without a key left out, a `null` value read as "", the last of a key wins. */
export function valuesOf(answer: ConfigAnswer): Map<string, string> {
  const out = new Map<string, string>();
  const { entries } = answer;
  for (let i = 1; i < entries.length; i += FIELDS_PER_ENTRY) {
    const key = entries[i];
    if (key !== null && key !== undefined) out.set(key, entries[i + 1] ?? '');
  }
  return out;
}

/** The worker's side: the last map of every stream, and the delta of each new answer against it. */
export class ValuesDiffer {
  private nextToken = 1;
  /** Stream → its last answer's token and map; iteration order is least recently used first. */
  private readonly streams = new Map<string, { token: number; values: Map<string, string> }>();
  /** Token → every changed string of that delta, until its last chunk is taken (only the newest few). */
  private readonly pending = new Map<number, readonly string[]>();

  /** The delta of `answer` against the stream's `base`, if this differ still holds it. */
  delta(stream: string, base: number | undefined, answer: ConfigAnswer): ValuesDelta {
    const token = this.nextToken++;
    // An answer carrying an error gives no values: the stream keeps its last good map.
    if (answer.error) return { version: answer.version, error: answer.error, token, base: undefined, removed: [], changed: [], changedLength: 0 };
    const values = valuesOf(answer);
    const held = this.streams.get(stream);
    const relative = held !== undefined && held.token === base ? held.values : undefined;
    const removed: string[] = [];
    const changed: string[] = [];
    for (const [key, value] of values) if (relative?.get(key) !== value) changed.push(key, value);
    if (relative) for (const key of relative.keys()) if (!values.has(key)) removed.push(key);
    this.streams.delete(stream);
    this.streams.set(stream, { token, values });
    if (this.streams.size > REMEMBERED_STREAMS) this.streams.delete(this.streams.keys().next().value!);
    const first = changed.length <= 2 * CHUNK_PAIRS ? changed : changed.slice(0, 2 * CHUNK_PAIRS);
    if (first !== changed) {
      this.pending.set(token, changed);
      if (this.pending.size > 4) this.pending.delete(this.pending.keys().next().value!);
    }
    return {
      version: answer.version,
      error: answer.error,
      token,
      base: relative ? base : undefined,
      removed,
      changed: first,
      changedLength: changed.length,
    };
  }

  /** The changed strings of delta `token` from `from` on (one chunk); undefined when no longer held. */
  chunk(token: number, from: number): readonly string[] | undefined {
    const changed = this.pending.get(token);
    if (!changed) return undefined;
    const end = Math.min(changed.length, from + 2 * CHUNK_PAIRS);
    if (end >= changed.length) this.pending.delete(token);
    return changed.slice(from, end);
  }
}
