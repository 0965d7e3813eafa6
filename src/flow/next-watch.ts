/**
 * The `next` requests a flow published on the bus (`--next-on-bus`, or while it stops), watched until one is
 * known taken, so that one the broker acknowledged and then dropped does not leave its conversation silent.
 *
 * A non-persistent Pulsar topic drops a message it has no subscriber for at that instant: while a moved topic's
 * consumers are not back yet (on WebSocket the broker's WebSocket service has its producer on the reloaded topic
 * before its consumer, a window no client sees), or when a broker short of CPU cannot hand it over. Nobody then
 * runs the conversation's next iteration, and nobody would tell its client.
 *
 * A watched `next` is taken when this replica receives it (`received`), or when another replica asks the claims
 * topic about it (it received a copy marked as possibly a second one, and runs it or leaves it as another's). One
 * not taken `afterMs` after its publish is asked about on the claims topic (request-claims.ts: every second, up
 * to its wait, until a replica that runs it or ran it answers; the first ask is answered in the common case). None within the claims wait: it was dropped, and `run` runs it here, as a kept
 * `next` runs. A copy that reaches this replica later is left (`wasRecovered`).
 *
 * What it costs: a Map entry per `next` in transit (its key was computed for the claims anyway), one timer per
 * flow while entries wait (a sweep, not a timer per `next`), and with several replicas one ask and one answer on
 * the claims topic per `next` another replica took (every replica reads both). A `next` this replica takes
 * itself within `afterMs` asks nobody.
 */
import type { Logger } from 'pino';
import type { Properties, TransportStatus } from '../bus/index.js';

/**
 * How long after its publish a `next` may be untaken before anyone is asked about it. The broker hands a message
 * over in milliseconds, and a replica busy enough to lag by a second still begins the request (records its key)
 * on arrival, before it waits for a slot; a move's window of lost messages lasts about two seconds. So the common
 * case never asks, and a dropped `next` runs here within this plus the claims wait (5 s): seconds, not the
 * gateway's ten minutes (`--next-watch`).
 */
export const DEFAULT_NEXT_WATCH_MS = 2000;
/** How long a `next` run here is remembered, so that a copy delivered late is left: as RecentRequests remembers. */
const RECOVERED_REMEMBER_MS = 60_000;
/**
 * How long the asks about one `next` go on while the broker connection is not steady: a claims wait across a lost
 * connection proves nothing (an ask or its answer may be lost with it). Within the minute its holder remembers it.
 */
const STEADY_WAIT_WITHIN_MS = 40_000;

export interface NextWatchParts {
  afterMs: number;
  /** True when this replica runs `key` or ran it lately (any of its flows: a flow restarting hands its nexts to its successor). */
  heldHere: (key: string) => boolean;
  /** The replica that holds `key`, asked on the claims topic, and whether an ask of ours came back; absent: nobody is asked. */
  holderOf?: (key: string, signal: AbortSignal) => Promise<{ holder?: string; heard: boolean }>;
  /** The transport's status: a claims wait counts only if the connection stayed up, in one epoch, throughout. */
  status: () => TransportStatus;
  /** Runs a `next` no replica took, here. */
  run: (payload: Buffer, properties: Properties) => void;
  logger: Logger;
}

/** One watched `next`; `due` is Infinity until its publish is confirmed. */
interface Watched {
  payload: Buffer;
  properties: Properties;
  due: number;
  asking?: AbortController;
}

/** What the publisher of one `next` tells the watch: the broker confirmed it, or the publish failed. */
export interface NextTicket {
  published(): void;
  failed(): void;
}

export class NextWatch {
  private readonly watched = new Map<string, Watched>();
  /** Key → when it was run here: a copy delivered late is left. */
  private readonly recovered = new Map<string, number>();
  private sweeper: NodeJS.Timeout | undefined;
  private hurried = false;

  constructor(private readonly parts: NextWatchParts) {}

  /** The `next` requests watched: published and not known taken yet, or being asked about. */
  get size(): number {
    return this.watched.size;
  }

  /** Called before the publish: a delivery or an ask seen from then on marks it taken. */
  watch(key: string, payload: Buffer, properties: Properties): NextTicket {
    const entry: Watched = { payload, properties, due: Infinity };
    this.watched.set(key, entry);
    return {
      published: () => {
        // Received already (a single replica's common case): no timer for it.
        if (this.watched.get(key) !== entry) return;
        entry.due = Date.now() + (this.hurried ? 0 : this.parts.afterMs);
        this.sweep();
      },
      failed: () => this.taken(key),
    };
  }

  /** The request of `key` reached this replica, or another replica asked about it: it is taken. */
  taken(key: string): void {
    const entry = this.watched.get(key);
    if (!entry) return;
    this.watched.delete(key);
    entry.asking?.abort();
  }

  /** True when `key` was run here as a dropped `next` within the last minute: a copy of it now is one too many. */
  wasRecovered(key: string): boolean {
    if (this.recovered.size === 0) return false;
    const before = Date.now() - RECOVERED_REMEMBER_MS;
    for (const [old, at] of this.recovered) {
      if (at > before) break;
      this.recovered.delete(old);
    }
    return this.recovered.has(key);
  }

  /** The flow stops and receives nothing more: what is watched, and what is published from now on, is asked about at once. */
  hurry(): void {
    this.hurried = true;
    const now = Date.now();
    for (const entry of this.watched.values()) if (entry.due !== Infinity) entry.due = now;
    this.sweep();
  }

  /** Stops watching: no more asks, nothing more is run here. */
  close(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    for (const key of [...this.watched.keys()]) this.taken(key);
  }

  /** Keeps one sweep timer while entries wait; the sweep stops itself once none does. */
  private sweep(): void {
    if (this.sweeper) return;
    const every = Math.max(10, Math.floor(this.parts.afterMs / 4));
    this.sweeper = setInterval(() => this.check(), every);
    this.sweeper.unref();
    if (this.hurried) this.check();
  }

  private check(): void {
    if (this.watched.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
      return;
    }
    const now = Date.now();
    for (const [key, entry] of this.watched) {
      if (entry.due > now) continue;
      // The claims topic does not carry a replica's asks to itself: what another flow of this replica took is seen here.
      if (this.parts.heldHere(key)) this.taken(key);
      else if (!entry.asking) void this.ask(key, entry);
    }
  }

  /** Asks who holds `key`; none over a steady connection, and still not taken here: it was dropped, and runs here. */
  private async ask(key: string, entry: Watched): Promise<void> {
    const signal = (entry.asking = new AbortController()).signal;
    const giveUpAt = Date.now() + STEADY_WAIT_WITHIN_MS;
    let holder: string | undefined;
    let steady = false;
    while (!steady && !signal.aborted) {
      const before = this.parts.status();
      const answer = await this.parts.holderOf?.(key, signal).catch(() => undefined);
      holder = answer?.holder;
      const after = this.parts.status();
      const heard = answer?.heard === true;
      steady = holder !== undefined || !this.parts.holderOf || (heard && before.connected && after.connected && before.epoch === after.epoch);
      if (!steady && Date.now() > giveUpAt) break;
      if (!steady) await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    if (this.watched.get(key) !== entry) return;
    this.watched.delete(key);
    const id = entry.properties.id;
    if (holder !== undefined) {
      this.parts.logger.debug({ id, holder }, 'A next request of this replica was taken by another replica');
      return;
    }
    if (!steady) {
      this.parts.logger.warn(
        { id },
        `Cannot tell whether a replica took the next request of conversation ${id ?? '(no id)'}: the broker connection was not ` +
          `steady for a whole claims wait within ${STEADY_WAIT_WITHIN_MS / 1000} s; it is not run here (it would run twice if one did)`,
      );
      return;
    }
    this.parts.logger.warn(
      { id },
      `The next request of conversation ${id ?? '(no id)'} was acknowledged by the broker but reached no replica ` +
        'and none claims it: the broker dropped it (a non-persistent topic that moved or a broker short of CPU); running it here',
    );
    this.recovered.set(key, Date.now());
    this.parts.run(entry.payload, entry.properties);
  }
}
