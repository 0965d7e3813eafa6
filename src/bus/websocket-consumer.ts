/**
 * A consumer over the WebSocket API: each message frame becomes an IncomingMessage whose ack/nack go back on the
 * link's current socket. After a reconnect it subscribes again under the same subscription name.
 */
import type { Logger } from 'pino';
import { deliver } from './deliver.js';
import type { Consumer, IncomingMessage, Properties, SubscribeOptions } from './transport.js';
import { Link, type LinkSettings } from './websocket-link.js';

interface MessageFrame {
  messageId: string;
  payload: string;
  properties?: Properties | null;
  redeliveryCount?: number;
}

export class WebSocketConsumer implements Consumer {
  readonly topic: string;
  readonly subscription: string;
  private readonly link: Link;
  private readonly logger: Logger;
  private closed = false;

  constructor(
    private readonly options: SubscribeOptions,
    url: string,
    settings: LinkSettings,
    private readonly onClosed: () => void,
  ) {
    this.topic = options.topic;
    this.subscription = options.subscription;
    this.logger = settings.logger;
    this.link = new Link(`consumer ${options.subscription} on ${options.topic}`, url, settings, {
      onOpen: () => undefined,
      onText: (text) => this.onFrame(text),
      onDown: () => undefined,
    });
  }

  start(): Promise<void> {
    return this.link.start();
  }

  downDetail(): string | undefined {
    return this.link.downDetail();
  }

  async close(options?: { unsubscribe?: boolean }): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onClosed();
    await this.link.close(options?.unsubscribe ? (ws) => ws.send(JSON.stringify({ type: 'unsubscribe' })) : undefined);
  }

  private onFrame(text: string): void {
    if (this.closed) return;
    let frame: Partial<MessageFrame>;
    try {
      frame = JSON.parse(text) as Partial<MessageFrame>;
    } catch {
      this.logger.warn({ link: this.link.label, frame: text.slice(0, 200) }, 'unparseable frame from broker');
      return;
    }
    if (typeof frame.messageId !== 'string' || typeof frame.payload !== 'string') {
      this.logger.debug({ link: this.link.label, frame: text.slice(0, 200) }, 'ignoring a non-message frame');
      return;
    }
    this.dispatch(frame as MessageFrame);
  }

  private dispatch(frame: MessageFrame): void {
    let settled = false;
    const command = async (body: Record<string, string>): Promise<void> => {
      if (settled || this.closed) return;
      settled = true;
      await this.sendCommand(body);
    };
    const message: IncomingMessage = {
      messageId: frame.messageId,
      topic: this.topic,
      payload: Buffer.from(frame.payload, 'base64'),
      properties: frame.properties ?? {},
      redeliveryCount: typeof frame.redeliveryCount === 'number' ? frame.redeliveryCount : 0,
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
      ws.send(JSON.stringify(body), (err) => {
        if (err) this.logger.debug({ link: this.link.label, err: err.message }, 'ack/nack not written');
        resolve();
      });
    });
  }
}
