/**
 * The flow's consumer of the supervisor's aggregation topic: one Key_Shared subscription shared by every
 * replica, keyed by correlation id, so all messages of one fan-out reach the same replica (fan-in.ts). It holds
 * them unacknowledged until the fan-out is complete, then sends the findings and the synthesis request and
 * acknowledges them all; a correlation that stalls past the timeout ends the client's dialog with one error.
 * If this replica dies or disconnects, the broker gives the held messages to the key's next owner, which
 * rebuilds the same state from them.
 */
import type { Consumer, IncomingMessage, Transport } from '../bus/index.js';
import {
  type DecodedFanIn,
  describeFailure,
  emitFanIn,
  errorResponse,
  FAN_IN_PROPERTY,
  FanIn,
  fanInKindOf,
  type FanInStep,
  readFanInMessage,
  REJECTED,
} from '../agent/index.js';
import { agentRequestCodec, type AgentRequest } from '../wire/index.js';
import { clipText } from '../errors/index.js';
import { newDialog, settleAll } from './dialog.js';
import { iterationOutput, type FlowOutput } from './iteration-output.js';
import type { AggregationOutcome, FlowTelemetry } from './ports.js';

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

/** What the consumer reports (metrics): the flow's telemetry's aggregation events. */
export type FanInEvents = Pick<FlowTelemetry, 'aggregationEnded' | 'aggregationRefused'>;

export class FanInConsumer {
  private readonly fanIn = new FanIn<IncomingMessage>((a, b) => a.messageId === b.messageId);
  private consumer: Consumer | undefined;
  private timer: NodeJS.Timeout | undefined;
  private unwatch: (() => void) | undefined;

  constructor(
    private readonly flow: FlowOutput,
    private readonly settings: FanInSettings,
    private readonly events: FanInEvents,
  ) {}

  private ended(outcome: AggregationOutcome): void {
    this.events.aggregationEnded(outcome);
  }

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

  /**
   * With signing, the signature check: a message that fails it (or cannot be decoded to be checked) was not
   * written by an agent holding the key. Anyone who can publish on the topic could have sent it, naming any
   * conversation: it is dropped without a word to the conversation it names (a genuine fan-in it might have
   * been part of still ends once, by its timeout). Returns the verified signing time, or `undefined` to drop.
   */
  private verified(message: IncomingMessage, request: AgentRequest | undefined, problem?: string): { signedAt?: number } | undefined {
    const gate = this.flow.gate;
    if (!gate?.checkAggregation) return {};
    const maxAgeMs = this.settings.timeoutMs + ORPHAN_GRACE_MS;
    const kind = fanInKindOf(message.properties);
    const check =
      request && kind
        ? gate.checkAggregation(this.flow.definition, request, message.properties, maxAgeMs, kind)
        : {
            refused: {
              reason: 'bad-signature',
              message: `it cannot be read, so its signature cannot be checked (${problem ?? `its ${FAN_IN_PROPERTY} property is ${JSON.stringify(message.properties[FAN_IN_PROPERTY] ?? null)}`})`,
            },
          };
    if (!check.refused) return check.signedAt !== undefined ? { signedAt: check.signedAt } : {};
    this.flow.logger.warn(
      { messageId: message.messageId, id: message.properties.id, reason: check.refused.reason, correlationId: request?.correlation_id },
      `Aggregation message refused: ${check.refused.message}; the conversation it names is not ended by it`,
    );
    this.events.aggregationRefused(check.refused.reason);
    return undefined;
  }

  private async handle(message: IncomingMessage): Promise<void> {
    const { logger } = this.flow;
    let step: FanInStep<IncomingMessage>;
    let correlationId: string;
    let request: AgentRequest | undefined;
    try {
      request = agentRequestCodec.decode(message.payload);
    } catch (error) {
      if (!this.verified(message, undefined, describeFailure(error).text)) return message.ack();
    }
    try {
      const verified = this.verified(message, request);
      if (!verified) return await message.ack();
      if (!request) request = agentRequestCodec.decode(message.payload);
      const decoded = readFanInMessage(message, request, verified.signedAt);
      const added = this.add(decoded, message);
      correlationId = added.correlationId;
      step = added.step;
    } catch (error) {
      const reason = describeFailure(error).text;
      logger.error({ err: error, messageId: message.messageId }, `Dropping an aggregation message that cannot be read: ${reason}`);
      // It can never join a fan-in: the conversation it names (if any) ends now rather than waiting for nothing.
      await this.endConversation('', message.properties.id ?? '', `the supervisor aggregation message of this conversation cannot be read (${reason}); the conversation ends here`);
      await message.ack();
      return;
    }
    if (step.kind === 'ignored') {
      logger.info({ messageId: message.messageId, correlationId }, `Aggregation message ignored: ${step.reason}`);
      if (step.late) this.ended('unclaimed');
      await step.handle.ack();
      return;
    }
    if (step.kind === 'cancelled') {
      logger.warn({ correlationId, id: step.id }, `Supervisor fan-out cancelled: ${REJECTED.cancelled}; its late subagent completions are dropped`);
      this.ended('cancelled');
      await Promise.all(step.handles.map((h) => h.ack()));
      return;
    }
    if (step.kind === 'rejected') {
      const text = unclaimedCompletionText(correlationId, step.reason);
      logger.warn({ correlationId, id: step.id, messages: step.handles.length }, `Subagent completion rejected: ${text}`);
      this.ended('unclaimed');
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
      const failure = describeFailure(error);
      if (failure.reason === 'too-large') {
        // Permanent: made again, it would be as large. The conversation ends here, once.
        const text = `the supervisor's synthesis request cannot be sent: ${failure.text}`;
        logger.error({ correlationId: record.correlationId, id: record.id }, `Supervisor fan-in failed: ${text}`);
        this.ended('failed');
        await this.endConversation(record.correlationId, record.id, text);
        await Promise.all(handles.map((h) => h.ack()));
        return;
      }
      // Not acknowledged: the broker redelivers the messages and the fan-in is made again.
      logger.warn({ err: error, correlationId: record.correlationId }, `Could not send a supervisor's synthesis request: ${failure.text}`);
      this.fanIn.reopen(record.correlationId);
      await Promise.all(handles.map((h) => h.nack()));
      return;
    }
    logger.info({ correlationId: record.correlationId, subagents: results.length }, 'All subagents completed; synthesis requested');
    this.ended('completed');
    await Promise.all(handles.map((h) => h.ack()));
  }

  private async expire(): Promise<void> {
    for (const stalled of this.fanIn.expire(this.settings.timeoutMs, this.orphanMs)) {
      if (stalled.cancelled) {
        // Its client already has the supervisor's error: nothing more is said.
        await Promise.all(stalled.handles.map((h) => h.ack()));
        continue;
      }
      const text = stalled.record
        ? `the supervisor's subagents did not all finish within ${this.settings.timeoutMs / 1000} s ` +
          `(${stalled.received} of ${stalled.record.expectedSiblings} completed; --aggregation-timeout); the conversation ends here`
        : unclaimedCompletionText(stalled.correlationId, 'its fan-out ended, timed out, or was never made');
      this.flow.logger.warn({ correlationId: stalled.correlationId }, `Aggregation timed out: ${text}`);
      this.ended(stalled.record ? 'timed-out' : 'unclaimed');
      await this.endConversation(stalled.correlationId, stalled.id, text);
      await Promise.all(stalled.handles.map((h) => h.ack()));
    }
  }

  private add(decoded: DecodedFanIn, message: IncomingMessage): { correlationId: string; step: FanInStep<IncomingMessage> } {
    switch (decoded.kind) {
      case 'fan-out':
        return { correlationId: decoded.record.correlationId, step: this.fanIn.addRecord(decoded.record, message) };
      case 'completion':
        return { correlationId: decoded.completion.correlationId, step: this.fanIn.addCompletion(decoded.completion, message) };
      case 'cancel':
        return { correlationId: decoded.cancel.correlationId, step: this.fanIn.addCancel(decoded.cancel, message) };
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
