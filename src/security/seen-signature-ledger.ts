/**
 * The replicas' shared memory of accepted signatures. Each replica publishes every signature it accepts on one
 * non-persistent topic (`request:tg:<processor id>-seen-signatures`), and every replica listens there on a
 * subscription of its own, remembering the others' as its own: a captured `next` replayed to another replica is
 * refused there too. A record carries an HMAC under the signing key, so only a key holder can mark a signature
 * as used (a forger cannot silence someone else's conversation by announcing its signature).
 *
 * Replicas that start later learn nothing from before they listen; the signer refuses, on non-persistent request
 * topics, any signature older than that (iteration-signature.ts), which is what closes replays across restarts
 * and scale-outs. What is left: a replay that reaches a second replica within the moment (milliseconds) before
 * the first one's record arrives, and a record the broker drops under overload; both are counted in the
 * README's threat model. Cost: one small message per accepted `next`, delivered to every replica.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { queueToTopic } from '../bus/topics.js';
import type { Consumer, IncomingMessage, Producer, Transport } from '../bus/transport.js';
import { untilBrokerUp } from '../bus/until-broker-up.js';
import { errorMessage } from '../errors/error-text.js';
import { RECORD_REFUSALS, type IterationSigner, type RecordRefusal } from './iteration-signature.js';

/** The property carrying a record's HMAC. */
const RECORD_MAC_PROPERTY = 'tg-agent-seen-mac';
/** Refused records are logged at most once per this interval (each is counted). */
export const REFUSAL_LOG_INTERVAL_MS = 60_000;

const REFUSAL_TEXT: Readonly<Record<RecordRefusal, string>> = {
  expired: 'already expired: a copy of an old record, nothing to remember',
  'not-yet-valid': 'expiring further ahead than --signing-max-age allows: do all replicas share --signing-max-age and a synchronised clock?',
  forged: 'not signed with the signing key: written outside the agent?',
  unreadable: 'not a seen-signature record',
};

/** What the ledger reports. */
export interface LedgerTelemetry {
  /** A record on the ledger topic was not taken, and why. */
  ledgerRecordRefused(reason: RecordRefusal): void;
}

interface SeenRecord {
  signature: string;
  expires_at: number;
  replica: string;
}

export interface SeenSignatureLedgerOptions {
  transport: Transport;
  signer: IterationSigner;
  /** The agent's processor id: replicas of one agent share a ledger. */
  processorId: string;
  logger: Logger;
  telemetry: LedgerTelemetry;
  /** Aborting gives up waiting for the broker. */
  signal: AbortSignal;
  now?: () => number;
}

/** The ledger's queue id for the replicas of `processorId`. */
export function seenSignaturesQueue(processorId: string): string {
  return `request:tg:${processorId}-seen-signatures`;
}

export class SeenSignatureLedger {
  /** This replica's name on the ledger: its own records are not read back. */
  private readonly replica = randomUUID();
  private readonly topic: string;
  private consumer: Consumer | undefined;
  private producer: Producer | undefined;
  /** Refusals since the last log line, by reason. */
  private readonly unlogged = Object.fromEntries(RECORD_REFUSALS.map((reason) => [reason, 0])) as Record<RecordRefusal, number>;
  private loggedAt = -Infinity;

  constructor(private readonly options: SeenSignatureLedgerOptions) {
    this.topic = queueToTopic(seenSignaturesQueue(options.processorId));
  }

  /** Listen to the other replicas, then announce this one's: call before the request topics are subscribed. */
  async start(): Promise<void> {
    const { transport, signer, processorId, signal } = this.options;
    this.consumer = await untilBrokerUp(
      () =>
        transport.subscribe({
          topic: this.topic,
          subscription: `${processorId}-seen-${this.replica}`,
          subscriptionType: 'Exclusive',
          receiverQueueSize: 10_000,
          handler: (message) => this.receive(message),
        }),
      { signal },
    );
    signer.listeningSince((this.options.now ?? Date.now)());
    this.producer = await untilBrokerUp(() => transport.createProducer(this.topic), { signal });
    signer.onAccepted = (signature, expiresAt) => this.announce(signature, expiresAt);
  }

  async stop(): Promise<void> {
    this.options.signer.onAccepted = undefined;
    await Promise.allSettled([this.consumer?.close({ unsubscribe: true }), this.producer?.close()]);
  }

  private announce(signature: string, expiresAt: number): void {
    const record: SeenRecord = { signature, expires_at: expiresAt, replica: this.replica };
    const properties = { [RECORD_MAC_PROPERTY]: this.options.signer.signSeen(signature, expiresAt) };
    this.producer?.send({ payload: Buffer.from(JSON.stringify(record), 'utf8'), properties }).catch((error: unknown) => {
      this.options.logger.warn({ err: errorMessage(error) }, 'Could not tell the other replicas of an accepted signature; a replay of it to another replica is not refused there');
    });
  }

  private async receive(message: IncomingMessage): Promise<void> {
    await message.ack();
    const record = readRecord(message.payload);
    if (record === undefined) return this.refuse('unreadable');
    if (record.replica === this.replica) return;
    const refusal = this.options.signer.acceptSeen(record.signature, record.expires_at, message.properties[RECORD_MAC_PROPERTY] ?? '');
    if (refusal !== undefined) this.refuse(refusal);
  }

  /** Counted every time; logged at most once per REFUSAL_LOG_INTERVAL_MS, with what was refused since the last line. */
  private refuse(reason: RecordRefusal): void {
    this.options.telemetry.ledgerRecordRefused(reason);
    this.unlogged[reason] += 1;
    const now = (this.options.now ?? Date.now)();
    if (now - this.loggedAt < REFUSAL_LOG_INTERVAL_MS) return;
    this.loggedAt = now;
    const refused = Object.fromEntries(Object.entries(this.unlogged).filter(([, count]) => count > 0));
    for (const key of RECORD_REFUSALS) this.unlogged[key] = 0;
    this.options.logger.warn(
      { topic: this.topic, refused },
      `Refused seen-signature records (${REFUSAL_TEXT[reason]}); counted in tg_agent_ledger_records_refused_total, ` +
        `logged at most once every ${REFUSAL_LOG_INTERVAL_MS / 1000} s`,
    );
  }
}

function readRecord(payload: Buffer): SeenRecord | undefined {
  try {
    const value = JSON.parse(payload.toString('utf8')) as Partial<SeenRecord>;
    if (typeof value.signature !== 'string' || !Number.isSafeInteger(value.expires_at) || typeof value.replica !== 'string') return undefined;
    return { signature: value.signature, expires_at: value.expires_at as number, replica: value.replica };
  } catch {
    return undefined;
  }
}
