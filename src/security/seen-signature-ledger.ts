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
import { type Consumer, type IncomingMessage, type Producer, queueToTopic, type Transport, untilBrokerUp } from '../bus/index.js';
import { errorMessage } from '../errors/index.js';
import type { IterationSigner } from './iteration-signature.js';

/** The property carrying a record's HMAC. */
const RECORD_MAC_PROPERTY = 'tg-agent-seen-mac';

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
    if (record === undefined || record.replica === this.replica) return;
    const mac = message.properties[RECORD_MAC_PROPERTY] ?? '';
    if (!this.options.signer.verifySeen(record.signature, record.expires_at, mac)) {
      this.options.logger.warn({ topic: this.topic }, 'Dropped a seen-signature record that is not signed with the signing key (written outside the agent?)');
      return;
    }
    this.options.signer.rememberAccepted(record.signature, record.expires_at);
  }
}

function readRecord(payload: Buffer): SeenRecord | undefined {
  try {
    const value = JSON.parse(payload.toString('utf8')) as Partial<SeenRecord>;
    if (typeof value.signature !== 'string' || typeof value.expires_at !== 'number' || typeof value.replica !== 'string') return undefined;
    return { signature: value.signature, expires_at: value.expires_at, replica: value.replica };
  } catch {
    return undefined;
  }
}
