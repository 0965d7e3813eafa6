/**
 * How every transport hands a message to its consumer's handler: off the caller's stack, and a handler that
 * throws gets the message nacked (the broker redelivers it) with the error logged where it came from.
 */
import type { Logger } from 'pino';
import type { IncomingMessage, MessageHandler } from './transport.js';

export function deliver(
  handler: MessageHandler,
  message: IncomingMessage,
  logger: Logger,
  where: { topic: string; subscription: string },
): void {
  void (async () => {
    try {
      await handler(message);
    } catch (err) {
      logger.warn({ err, ...where, messageId: message.messageId }, 'handler failed: nack');
      await message.nack();
    }
  })();
}
