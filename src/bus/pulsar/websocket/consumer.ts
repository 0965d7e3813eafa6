/**
 * A consumer over the WebSocket API: each message frame becomes an IncomingMessage whose ack/nack go back on the
 * link's current socket. After a reconnect it subscribes again under the same subscription name. Each socket
 * subscribes under a consumer name of its own, so that the broker's stats can say whether the WebSocket service
 * has a consumer behind it (socket-heal.ts).
 */
import type { Logger } from 'pino';
import { deliver } from '../../deliver.js';
import type { Consumer, IncomingMessage, SubscribeOptions } from '../../transport.js';
import type { DecodedFrame, MessageFrame } from './frame.js';
import { FrameDecoder } from './frame-decoder.js';
import { Link, type LinkSettings } from './link.js';
import { sendCoalesced } from './coalesced-writes.js';
import type { HealSocket, HealTarget } from './socket-heal.js';
import type { PublishLink } from '../../connection-status.js';

export class WebSocketConsumer implements Consumer, HealTarget {
  readonly topic: string;
  readonly subscription: string;
  private readonly link: Link;
  private readonly logger: Logger;
  private readonly frames: FrameDecoder;
  private readonly onDelivered: ((topic: string) => void) | undefined;
  private closed = false;

  constructor(
    private readonly options: SubscribeOptions,
    /** The consumer endpoint's URL for a socket subscribing under `consumerName`. */
    url: (consumerName: string) => string,
    settings: LinkSettings,
    private readonly onClosed: () => void,
  ) {
    this.topic = options.topic;
    this.subscription = options.subscription;
    this.logger = settings.logger;
    this.onDelivered = settings.onDelivered;
    this.frames = new FrameDecoder(settings.logger, (frame) => this.onFrame(frame));
    this.link = new Link(`consumer ${options.subscription} on ${options.topic}`, url, settings, {
      onOpen: () => undefined,
      onTextBytes: (bytes) => this.frames.push(bytes),
      onDown: () => undefined,
    });
  }

  start(): Promise<void> {
    return this.link.start();
  }

  downDetail(): string | undefined {
    return this.link.downDetail();
  }

  get socket(): HealSocket {
    return this.link;
  }

  /** Its connection, as a publish whose replies come back on it waits for it (connection-status.ts). */
  get publishLink(): PublishLink {
    return this.link;
  }

  waiting(): boolean {
    return true;
  }

  reopen(why: string): void {
    this.link.reopen(why);
  }

  async close(options?: { unsubscribe?: boolean }): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onClosed();
    await this.link.close(options?.unsubscribe ? (ws) => ws.send(JSON.stringify({ type: 'unsubscribe' })) : undefined);
  }

  private onFrame(frame: DecodedFrame): void {
    if (this.closed) return;
    if ('unparseable' in frame) this.logger.warn({ link: this.link.label, frame: frame.unparseable }, 'unparseable frame from broker');
    else if ('notMessage' in frame) this.logger.debug({ link: this.link.label, frame: frame.notMessage }, 'ignoring a non-message frame');
    else this.dispatch(frame.message);
  }

  private dispatch(frame: MessageFrame): void {
    this.onDelivered?.(this.topic);
    let settled = false;
    const command = async (body: Record<string, string>): Promise<void> => {
      if (settled || this.closed) return;
      settled = true;
      await this.sendCommand(body);
    };
    const message: IncomingMessage = {
      messageId: frame.messageId,
      topic: this.topic,
      payload: frame.payload,
      properties: frame.properties,
      redeliveryCount: frame.redeliveryCount,
      ack: () => command({ messageId: frame.messageId }),
      nack: () => command({ type: 'negativeAcknowledge', messageId: frame.messageId }),
    };
    deliver(this.options.handler, message, this.logger, { topic: this.topic, subscription: this.subscription });
  }

  /**
   * Acks and nacks go on the current connection, even for a message delivered on an earlier one: the broker
   * acknowledges by position on the subscription, so that still stops a redelivery. With no connection the
   * command is dropped and the broker redelivers the message.
   */
  private sendCommand(body: Record<string, string>): Promise<void> {
    const ws = this.link.current;
    if (!ws) {
      this.logger.debug({ link: this.link.label, body }, 'not connected: ack/nack dropped, the broker will redeliver');
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      sendCoalesced(ws, JSON.stringify(body), (err) => {
        if (err) this.logger.debug({ link: this.link.label, err: err.message }, 'ack/nack not written');
        resolve();
      });
    });
  }
}
