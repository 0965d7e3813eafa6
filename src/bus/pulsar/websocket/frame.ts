/**
 * A frame the WebSocket API sends a consumer, decoded: the message it carries (payload as bytes), or why it
 * carries none. The same function runs on the event loop for the usual small frames and in a worker thread
 * for large ones (frame-decoder.ts).
 */
import type { Properties } from '../../transport.js';

export interface MessageFrame {
  readonly messageId: string;
  readonly payload: Buffer;
  readonly properties: Properties;
  readonly redeliveryCount: number;
}

export type DecodedFrame =
  | { readonly message: MessageFrame }
  /** Not JSON, or JSON that is not a message (the first 200 characters, for the log). */
  | { readonly unparseable: string }
  | { readonly notMessage: string };

export function decodeFrame(text: string): DecodedFrame {
  let frame: { messageId?: unknown; payload?: unknown; properties?: Properties | null; redeliveryCount?: unknown };
  try {
    frame = JSON.parse(text) as typeof frame;
  } catch {
    return { unparseable: text.slice(0, 200) };
  }
  if (typeof frame?.messageId !== 'string' || typeof frame.payload !== 'string') return { notMessage: text.slice(0, 200) };
  return {
    message: {
      messageId: frame.messageId,
      payload: Buffer.from(frame.payload, 'base64'),
      properties: frame.properties ?? {},
      redeliveryCount: typeof frame.redeliveryCount === 'number' ? frame.redeliveryCount : 0,
    },
  };
}
