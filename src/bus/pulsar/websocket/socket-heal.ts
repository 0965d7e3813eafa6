/**
 * Sockets that are open while the broker has no client of theirs behind them: reopened, for a while after
 * something moved.
 *
 * The broker's WebSocket service holds one consumer or producer of its own client behind each of our sockets.
 * When the topic moves (a broker lost, a bundle unloaded), that client is disconnected and reconnects on the Java
 * client's backoff, which grows to a minute; our socket stays open meanwhile. Behind a consumer socket nothing
 * arrives, and a non-persistent topic drops what the subscription would have been given; behind a producer socket
 * a send waits unacknowledged, and so does every later one. A new socket makes the service subscribe, or create
 * its producer, at once. Each socket registers under a name of its own (`consumerName`, `producerName`), so the
 * topic's admin stats say whether the broker has it.
 *
 * Nobody polls thousands of idle topics for this: the transport calls `moved()` on what suggests a move (a
 * producer's send unacknowledged for a while, a link of ours lost, a send of ours on a topic we also consume after
 * which none of our consumers of it heard anything for `echoMs`: the agent's `next` requests go to its own request
 * topic, and a move can leave the broker acknowledging them with nobody subscribed), and only for `windowMs` after
 * the last such signal does the watch look, every `pollMs`, at the topics of its open sockets: every consumer's, and
 * each producer's that has a send waiting (an idle producer is left to the service's own reconnect: the service
 * creates the clients of new sockets on a bounded pool of threads, and reopening every idle producer queued them
 * ahead of the consumers and producers that were needed). A socket is reopened only when the stats say so (the topic or the subscription without
 * its name) and the broker sent nothing on it since the stats were asked for; stats that cannot be read (the topic
 * has no running owner yet, the admin API is away) leave it alone. Meanwhile the topics whose stats could not be read
 * are read again every `probeMs`, and the first of them whose stats come (an owner again) starts the next look at
 * once instead of at its tick, since
 * on a non-persistent topic whatever a gateway publishes before our consumers are back is dropped. A look reads
 * the consumers' topics first, a few at a time, each read starting as soon as one ends. Outside the window the
 * consumers' topics alone are swept every `sweepMs` (one read per topic): a client with nothing in flight sees no
 * sign of a move, and the service's own reconnect once left such a consumer away for minutes.
 *
 * An idle producer is checked when it is needed instead: within the window, the first send on a socket the broker
 * has said nothing on since the last signal waits for one stats read of its topic (`beforeSend`), and a socket the
 * broker has no producer behind is reopened before the send is written. Without that, the send would wait behind
 * the service's backoff until the ack watch reopened the socket, and fail then as possibly published, which a call
 * that may act (an MCP tool) is never sent again after.
 */
import type { Logger } from 'pino';
import { errorMessage } from '../../../errors/index.js';
import type { TopicClients, TopicClientsReader } from '../topic-clients.js';

/** What the watch needs of a consumer's or a producer's socket (link.ts). */
export interface HealSocket {
  /** The name the current socket registered its client under at the broker. */
  readonly socketName: string;
  /** How long the current socket has been open; undefined while none is. */
  openForMs(): number | undefined;
  /** performance.now() of the last frame the broker sent on the current socket (-Infinity: none). */
  heardAt(): number;
}

/** What the watch needs of a consumer or a producer. */
export interface HealTarget {
  readonly topic: string;
  /** A consumer's subscription; undefined for a producer. */
  readonly subscription: string | undefined;
  readonly socket: HealSocket;
  /**
   * Whether it needs the broker's client now: a consumer always (a delivery may come at any time), a producer while
   * a send of its has waited for its acknowledgement (an idle one is left to the service's own reconnect).
   */
  waiting(): boolean;
  /** Drops the open socket so that the link reconnects. */
  reopen(why: string): void;
}

export interface SocketHealOptions {
  readonly read: TopicClientsReader;
  readonly logger: Logger;
  /** How long after the last movement signal the watch looks. Default 180 s (the service's backoff reaches a minute). */
  readonly windowMs?: number;
  /** Between two looks. Default 2 s. */
  readonly pollMs?: number;
  /** A socket open for less than this is not judged (its client may not show in the stats yet). Default 3 s. */
  readonly graceMs?: number;
  /** How long after a send of ours on a topic we consume one of our consumers of it should hear something. Default 5 s. */
  readonly echoMs?: number;
  /** How long a send waits for the stats read of `beforeSend` before it is written anyway. Default 2 s. */
  readonly checkWaitMs?: number;
  /** Between two reads of the topics whose stats could not be read, within the window. Default 500 ms. */
  readonly probeMs?: number;
  /** Between two sweeps of the consumers outside the window (0: none). Default 30 s. */
  readonly sweepMs?: number;
}

/** How many topics' stats one look reads at once. */
const READS_AT_ONCE = 8;

const DEFAULTS = { windowMs: 180_000, pollMs: 2_000, graceMs: 3_000, echoMs: 5_000, checkWaitMs: 2_000, probeMs: 500, sweepMs: 30_000 } as const;

export class SocketHeal {
  private readonly targets = new Set<HealTarget>();
  /** How many of the targets consume each topic. */
  private readonly consumed = new Map<string, number>();
  /** Per topic, the wait for a delivery after a send of ours there. */
  private readonly awaitingEcho = new Map<string, NodeJS.Timeout>();
  private watchUntil = -Infinity;
  /** performance.now() of the last movement signal. */
  private movedAt = -Infinity;
  /** When each producer's socket was last checked before a send (`beforeSend`). */
  private readonly checkedAt = new WeakMap<HealTarget, number>();
  /** The bounded wait for the check each producer's sends are waiting for. */
  private readonly checking = new Map<HealTarget, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private looking = false;
  /** A look is to start again as soon as the running one ends. */
  private lookAgain = false;
  /** Topics whose stats the last read of them could not give (no owner yet, the admin API away). */
  private readonly unreadable = new Set<string>();
  /** The next read of the unreadable topics alone (`probeUnreadable`). */
  private probe: NodeJS.Timeout | undefined;
  /** The consumers' sweep outside the window (`sweep`). */
  private sweeps: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastProblem: string | undefined;

  constructor(private readonly options: SocketHealOptions) {}

  add(target: HealTarget): () => void {
    this.targets.add(target);
    const consumes = target.subscription !== undefined;
    if (consumes) this.startSweeps();
    if (consumes) this.consumed.set(target.topic, (this.consumed.get(target.topic) ?? 0) + 1);
    return () => {
      if (!this.targets.delete(target) || !consumes) return;
      const left = (this.consumed.get(target.topic) ?? 1) - 1;
      if (left > 0) this.consumed.set(target.topic, left);
      else this.consumed.delete(target.topic);
    };
  }

  /** The broker acknowledged a send of ours on `topic`: where we consume it too, something should arrive soon. */
  sent(topic: string): void {
    if (this.stopped || !this.consumed.has(topic) || this.awaitingEcho.has(topic)) return;
    const echoMs = this.options.echoMs ?? DEFAULTS.echoMs;
    const timer = setTimeout(() => {
      this.awaitingEcho.delete(topic);
      this.moved(`nothing delivered on ${topic} within ${echoMs} ms of a send of ours there`);
    }, echoMs);
    timer.unref();
    this.awaitingEcho.set(topic, timer);
  }

  /** One of our consumers of `topic` was given a message. */
  delivered(topic: string): void {
    const timer = this.awaitingEcho.get(topic);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.awaitingEcho.delete(topic);
  }

  /** Something suggests a topic moved: watch the sockets for the next window. */
  moved(why: string): void {
    if (this.stopped) return;
    const windowMs = this.options.windowMs ?? DEFAULTS.windowMs;
    if (this.timer === undefined) this.options.logger.info({ why, windowMs }, 'a topic may have moved: checking that the broker has the client behind each open socket');
    this.movedAt = performance.now();
    this.watchUntil = this.movedAt + windowMs;
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.lookOnce(), this.options.pollMs ?? DEFAULTS.pollMs);
    this.timer.unref();
  }

  /**
   * Before a send on a producer: within the window, a socket open since before the last movement signal that the
   * broker has said nothing on since is checked first (one stats read of its topic per signal, shared by the sends
   * that come meanwhile), and reopened when the broker has no producer of its name. Undefined: send at once.
   */
  beforeSend(target: HealTarget): Promise<void> | undefined {
    if (this.stopped || performance.now() > this.watchUntil) return undefined;
    const { socket } = target;
    const openForMs = socket.openForMs();
    const graceMs = this.options.graceMs ?? DEFAULTS.graceMs;
    // Not open: the send waits for the link, which opens a new socket. Opened lately: too new to judge.
    if (openForMs === undefined || openForMs < graceMs) return undefined;
    const since = Math.max(performance.now() - openForMs, socket.heardAt(), this.checkedAt.get(target) ?? -Infinity);
    if (since > this.movedAt) return undefined;
    let wait = this.checking.get(target);
    if (wait === undefined) {
      const check = this.checkBeforeSend(target, graceMs).finally(() => this.checking.delete(target));
      // The sends wait for the check, or `checkWaitMs`, whichever comes first: one bounded wait they all share.
      wait = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.options.checkWaitMs ?? DEFAULTS.checkWaitMs);
        void check.then(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      this.checking.set(target, wait);
    }
    return wait;
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    for (const timer of this.awaitingEcho.values()) clearTimeout(timer);
    this.awaitingEcho.clear();
    clearTimeout(this.probe);
    clearInterval(this.sweeps);
    this.unreadable.clear();
  }

  /** One look at every open socket's topic; sockets the broker has no client behind are reopened. */
  async lookOnce(): Promise<void> {
    if (performance.now() > this.watchUntil) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    await this.look(false);
  }

  /**
   * Outside the window, every `sweepMs`: a look at the consumers alone, for a move nothing of ours saw (an idle
   * client sends nothing that could go unacknowledged, and the service keeps its sockets open). One it reopens
   * opens the window, for the rest of what moved.
   */
  private async sweep(): Promise<void> {
    if (this.timer !== undefined || this.looking) return;
    const reopened = await this.look(true);
    if (reopened > 0) this.moved(`a sweep found ${reopened} consumer${reopened === 1 ? '' : 's'} the broker does not have`);
  }

  private startSweeps(): void {
    const sweepMs = this.options.sweepMs ?? DEFAULTS.sweepMs;
    if (this.sweeps !== undefined || this.stopped || sweepMs <= 0) return;
    this.sweeps = setInterval(() => void this.sweep(), sweepMs);
    this.sweeps.unref();
  }

  /** Reads the stats of the watched sockets' topics and reopens what the broker lacks; resolves with how many. */
  private async look(consumersOnly: boolean): Promise<number> {
    if (this.looking) return 0;
    this.looking = true;
    let reopened = 0;
    try {
      const graceMs = this.options.graceMs ?? DEFAULTS.graceMs;
      const byTopic = new Map<string, HealTarget[]>();
      // Consumers' topics first: a consumer the service lost drops what its subscription is sent meanwhile.
      const targets = [...this.targets].sort((a, b) => Number(a.subscription === undefined) - Number(b.subscription === undefined));
      for (const target of targets) {
        if ((target.socket.openForMs() ?? -1) < graceMs || !target.waiting() || (consumersOnly && target.subscription === undefined)) continue;
        byTopic.set(target.topic, [...(byTopic.get(target.topic) ?? []), target]);
      }
      // A few reads at a time, the next starting as one ends: a topic whose stats are slow to come (no owner yet)
      // holds back no other.
      const queue = [...byTopic];
      const reader = async (): Promise<void> => {
        for (let next = queue.shift(); next !== undefined && !this.stopped; next = queue.shift()) {
          const [topic, onTopic] = next;
          const askedAt = performance.now();
          const clients = await this.read(topic);
          if (!clients || this.stopped) continue;
          for (const target of onTopic) if (this.judge(target, clients, askedAt, graceMs)) reopened += 1;
        }
      };
      await Promise.all(Array.from({ length: Math.min(READS_AT_ONCE, queue.length) }, reader));
    } finally {
      this.looking = false;
    }
    if (this.lookAgain) {
      this.lookAgain = false;
      void this.lookOnce();
    } else {
      this.probeSoon();
    }
    return reopened;
  }

  /** While some topics' stats cannot be read, those alone are read every `probeMs`, so that their owner's return starts a look. */
  private probeSoon(): void {
    if (this.stopped || this.probe !== undefined || this.unreadable.size === 0 || performance.now() > this.watchUntil) return;
    this.probe = setTimeout(() => void this.probeUnreadable(), this.options.probeMs ?? DEFAULTS.probeMs);
    this.probe.unref();
  }

  private async probeUnreadable(): Promise<void> {
    this.probe = undefined;
    const watched = new Set([...this.targets].map((target) => target.topic));
    const topics: string[] = [];
    for (const topic of this.unreadable) {
      if (watched.has(topic)) topics.push(topic);
      else this.unreadable.delete(topic);
    }
    for (let first = 0; first < topics.length && !this.stopped && !this.looking; first += READS_AT_ONCE) {
      await Promise.all(topics.slice(first, first + READS_AT_ONCE).map((topic) => this.read(topic)));
    }
    if (!this.looking) this.probeSoon();
  }

  /** A topic's stats came after reads of it could not give them: the topics may have an owner again. */
  private lookNow(): void {
    if (this.looking) this.lookAgain = true;
    else void this.lookOnce();
  }

  private async checkBeforeSend(target: HealTarget, graceMs: number): Promise<void> {
    const askedAt = performance.now();
    const clients = await this.read(target.topic);
    // Unreadable stats count as a check too: every send would otherwise wait for another read that fails.
    this.checkedAt.set(target, askedAt);
    if (clients && !this.stopped) this.judge(target, clients, askedAt, graceMs);
  }

  /** Reopens `target` when the stats lack its client; says whether it did. */
  private judge(target: HealTarget, clients: TopicClients, askedAt: number, graceMs: number): boolean {
    // Opened again while the stats were read: not judged on stats older than the socket.
    const { topic, subscription, socket } = target;
    if ((socket.openForMs() ?? -1) < graceMs) return false;
    // The broker sent something on it since: its client is there (a producer's acknowledgements resumed, say),
    // and reopening a producer then could fail a send the broker has just taken.
    if (socket.heardAt() >= askedAt) return false;
    const clientName = socket.socketName;
    const present = subscription === undefined ? clients.publishers.includes(clientName) : clients.subscriptions.get(subscription)?.includes(clientName);
    if (present) return false;
    const why =
      subscription === undefined
        ? `the broker has no producer ${clientName} on ${topic} while its socket is open`
        : `the broker has no consumer ${clientName} on subscription ${subscription} while its socket is open`;
    this.options.logger.warn({ topic, ...(subscription === undefined ? { producer: clientName } : { subscription, consumer: clientName }) }, `${why}: reopening it`);
    target.reopen(why);
    return true;
  }

  private async read(topic: string): Promise<TopicClients | undefined> {
    try {
      const clients = await this.options.read(topic);
      if (clients === undefined) this.unreadable.add(topic);
      else if (this.unreadable.delete(topic)) this.lookNow();
      this.lastProblem = undefined;
      return clients;
    } catch (error) {
      this.unreadable.add(topic);
      const problem = errorMessage(error);
      if (problem !== this.lastProblem) {
        this.options.logger.warn({ topic }, `Cannot ask the broker whether it has our consumers and producers (--broker-admin-url): ${problem}`);
        this.lastProblem = problem;
      }
      return undefined;
    }
  }
}
