/**
 * The flow's consumer of the supervisor's aggregation topic: one Key_Shared subscription shared by every
 * replica, keyed by correlation id, so all messages of one fan-out reach the same replica (fan-in.ts). It holds
 * them unacknowledged until the fan-out is complete, then sends the findings and the synthesis request and
 * acknowledges them all; a correlation that stalls past the timeout ends the client's dialog with one error.
 * If this replica dies or disconnects, the broker gives the held messages to the key's next owner, which
 * rebuilds the same state from them.
 */
import type { Consumer, IncomingMessage, Transport } from '../bus/transport.js';
import { FanIn, type FanInStep } from '../agent/patterns/fan-in.js';
import { readFanInMessage } from '../agent/patterns/fan-in-messages.js';
import { emitFanIn } from '../agent/patterns/supervisor.js';
import { errorResponse } from '../agent/responses.js';
import { describeFailure } from '../agent/failure.js';
import { clipText } from '../errors/error-text.js';
import { newDialog, settleAll } from './dialog.js';
import { iterationOutput, type FlowOutput } from './iteration-output.js';
import type { AggregationOutcome } from './ports.js';

/** TrustGraph's aggregator gives up on a correlation after this long (its `DEFAULT_TIMEOUT`). */
export const DEFAULT_AGGREGATION_TIMEOUT_MS = 300_000;
/** How long completions without a fan-out record wait for it before their dialog ends with an error. */
export const ORPHAN_GRACE_MS = 5_000;

/** The final error of a conversation whose subagent completion no supervisor is waiting for. */
export function unclaimedCompletionText(correlationId: string, reason: string): string {
  return (
    `a subagent completion for correlation ${clipText(correlationId, 120, { sayLength: true })} arrived, but no supervisor ` +
    `is waiting for it (${reason}); the conversation ends here`
  );
}

export interface FanInSettings {
  topic: string;
  subscription: string;
  timeoutMs: number;
}

/** Told when a fan-in ends (metrics). */
export type FanInEnded = (outcome: AggregationOutcome) => void;

export class FanInConsumer {
  private readonly fanIn = new FanIn<IncomingMessage>((a, b) => a.messageId === b.messageId);
  private consumer: Consumer | undefined;
  private timer: NodeJS.Timeout | undefined;
  private unwatch: (() => void) | undefined;

  constructor(
    private readonly flow: FlowOutput,
    private readonly settings: FanInSettings,
    private readonly ended?: FanInEnded,
  ) {}

  async start(transport: Transport): Promise<void> {
    this.consumer = await transport.subscribe({
      topic: this.settings.topic,
      subscription: this.settings.subscription,
      subscriptionType: 'Key_Shared',
      handler: (message) => this.handle(message),
    });
    // After a lost connection the broker may give this replica's keys, and the messages held here, to another
    // replica; what is held here would then time out with an error after that replica answered the client.
    let epoch = transport.status().epoch;
    this.unwatch = transport.onStatus((status) => {
      if (status.epoch === epoch) return;
      epoch = status.epoch;
      this.giveBack();
    });
    const every = Math.max(50, Math.floor(Math.min(this.settings.timeoutMs, this.orphanMs) / 4));
    this.timer = setInterval(() => void this.expire(), every);
    this.timer.unref();
  }

  private get orphanMs(): number {
    return Math.min(this.settings.timeoutMs, ORPHAN_GRACE_MS);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.unwatch?.();
    await this.consumer?.close();
    this.consumer = undefined;
    // What was held goes back to the broker with the closed consumer; it rebuilds wherever it lands.
    this.fanIn.reset();
  }

  /** Forget what is held and hand it back (nack): the broker gives it to whoever owns its keys now, who rebuilds it. */
  private giveBack(): void {
    const handles = this.fanIn.reset();
    if (handles.length === 0) return;
    this.flow.logger.info({ messages: handles.length }, 'Broker connection lost: the aggregation messages held here go back to the broker');
    for (const handle of handles) handle.nack().catch(() => undefined);
  }

  private async handle(message: IncomingMessage): Promise<void> {
    const { logger } = this.flow;
    let step: FanInStep<IncomingMessage>;
    let correlationId: string;
    try {
      const decoded = readFanInMessage(message);
      correlationId = decoded.kind === 'fan-out' ? decoded.record.correlationId : decoded.completion.correlationId;
      step = decoded.kind === 'fan-out' ? this.fanIn.addRecord(decoded.record, message) : this.fanIn.addCompletion(decoded.completion, message);
    } catch (error) {
      const reason = describeFailure(error).text;
      logger.error({ err: error, messageId: message.messageId }, `Dropping an aggregation message that cannot be read: ${reason}`);
      // It can never join a fan-in: the conversation it names (if any) ends now rather than waiting for nothing.
      await this.endConversation('', message.properties.id ?? '', `the supervisor aggregation message of this conversation cannot be read (${reason}); the conversation ends here`);
      await message.ack();
      return;
    }
    if (step.kind === 'ignored') {
      logger.info({ messageId: message.messageId }, `Aggregation message ignored: ${step.reason}`);
      await step.handle.ack();
      return;
    }
    if (step.kind === 'rejected') {
      const text = unclaimedCompletionText(correlationId, step.reason);
      logger.warn({ correlationId, id: step.id, messages: step.handles.length }, `Subagent completion rejected: ${text}`);
      this.ended?.('unclaimed');
      await this.endConversation(correlationId, step.id, text);
      await Promise.all(step.handles.map((h) => h.ack()));
      return;
    }
    if (step.kind === 'waiting') return;
    const { record, results, handles } = step;
    const dialog = newDialog();
    const output = iterationOutput(this.flow, record.id, dialog, record.template);
    try {
      await emitFanIn({ output, logger }, record, results);
      await settleAll(dialog);
      if (dialog.failure !== undefined) throw dialog.failure;
    } catch (error) {
      // Not acknowledged: the broker redelivers the messages and the fan-in is made again.
      logger.warn({ err: error, correlationId: record.correlationId }, `Could not send a supervisor's synthesis request: ${describeFailure(error).text}`);
      this.fanIn.reopen(record.correlationId);
      await Promise.all(handles.map((h) => h.nack()));
      return;
    }
    logger.info({ correlationId: record.correlationId, subagents: results.length }, 'All subagents completed; synthesis requested');
    this.ended?.('completed');
    await Promise.all(handles.map((h) => h.ack()));
  }

  private async expire(): Promise<void> {
    for (const stalled of this.fanIn.expire(this.settings.timeoutMs, this.orphanMs)) {
      const text = stalled.record
        ? `the supervisor's subagents did not all finish within ${this.settings.timeoutMs / 1000} s ` +
          `(${stalled.received} of ${stalled.record.expectedSiblings} completed; --aggregation-timeout); the conversation ends here`
        : unclaimedCompletionText(stalled.correlationId, 'its fan-out ended, timed out, or was never made');
      this.flow.logger.warn({ correlationId: stalled.correlationId }, `Aggregation timed out: ${text}`);
      this.ended?.(stalled.record ? 'timed-out' : 'unclaimed');
      await this.endConversation(stalled.correlationId, stalled.id, text);
      await Promise.all(stalled.handles.map((h) => h.ack()));
    }
  }

  /** End the conversation `id` (none when '') with one error message. */
  private async endConversation(correlationId: string, id: string, text: string): Promise<void> {
    if (id === '') return;
    const dialog = newDialog();
    await iterationOutput(this.flow, id, dialog).respond(errorResponse(text));
    await settleAll(dialog);
    if (dialog.failure !== undefined) {
      this.flow.logger.error({ err: dialog.failure, correlationId }, `Could not send the error ending conversation ${id}: ${text}`);
    }
  }
}
