/**
 * The handling of one consumed AgentRequest message, from its bytes to its ack: size check, decode, the
 * request gate, the iteration, and then the guarantee that the client gets exactly one final message.
 *
 * Every message an iteration derives is sized before it is sent (message-budget.ts). Whatever still fails —
 * a message over the transport's limit, a value too deep to process, a hook that throws — ends the dialog
 * with one small error response that says what really happened; the failure is logged as what it was,
 * counted, and audited. Only when even that error response cannot be published (the broker stayed
 * unreachable) is the request negatively acknowledged, and that is audited too.
 */
import type { IncomingMessage, RequestClient } from '../bus/index.js';
import {
  budgetFor,
  describeFailure,
  DialogError,
  errorResponse,
  type Failure,
  isSubagent,
  type IterationOutput,
  type IterationResult,
  requestLimitBytes,
  runAgentRequest,
  subagentCompletion,
} from '../agent/index.js';
import { type ToolClients, withoutTools } from '../tools/index.js';
import { type AgentAsk, askOf } from '../groups/index.js';
import { agentRequestCodec, agentResponseCodec, makeAgentRequest, type AgentRequest, type PromptRequest, type PromptResponse } from '../wire/index.js';
import { finalMayHaveBeenSent, newDialog, settleAll, type DialogState } from './dialog.js';
import { iterationOutput, type FlowOutput } from './iteration-output.js';
import { FINAL_MESSAGE_RETRY_MS } from './publish-policy.js';
import { firstNames, listNames } from '../errors/index.js';
import type { FlowRuntimeDeps, GateVerdict, RequestTelemetry } from './ports.js';

/** Default of `FlowRuntimeDeps.maxQueued`: a burst this large waits in memory (each holds its payload). */
export const DEFAULT_MAX_QUEUED = 10_000;
/** Default of `FlowRuntimeDeps.maxQueuedBytes`: what requests waiting for a slot may hold in memory together. */
export const DEFAULT_MAX_QUEUED_BYTES = 256 * 1024 * 1024;

export interface RequestHandlerContext extends FlowOutput {
  deps: FlowRuntimeDeps;
  prompt: RequestClient<PromptRequest, PromptResponse>;
  tools: ToolClients;
}

export class RequestHandler {
  constructor(private readonly ctx: RequestHandlerContext) {}

  /** The request limit in bytes: the setting, or the default share of what one message can carry. */
  get maxRequestBytes(): number {
    return requestLimitBytes(this.ctx.deps.transport, this.ctx.deps.maxRequestBytes);
  }

  /**
   * `kept`: a `next` request of this replica's own, handed over without the broker (flow-runtime.ts). Resolves
   * false when the request was given back to the broker (negatively acknowledged) to be delivered again.
   */
  async handle(message: IncomingMessage, kept = false): Promise<boolean> {
    const { deps, logger } = this.ctx;
    const started = performance.now();
    const consumer = this.ctx.definition.topics.request ?? '';
    const id = message.properties.id ?? 'unknown';
    const dialog = newDialog();
    // A non-persistent topic redelivers nothing, so holding a request's ack until its iteration is done only
    // holds the broker's flow-control window shut, and the broker drops what it cannot deliver (a burst, our
    // own `next` messages). So such requests are acked on arrival and wait here for a slot, up to `maxQueued`.
    const ackedOnArrival = message.topic.startsWith('non-persistent://');
    // Not awaited: nothing waits for the ack frame to be written.
    if (ackedOnArrival) message.ack().catch(() => {});
    const bytes = message.payload.length;
    const overloaded = this.overloaded(bytes);
    try {
      if (overloaded) await this.refuseOverloaded(id, dialog, overloaded);
      else await deps.limit.run(() => this.run(message, id, dialog, kept), bytes);
    } catch (error) {
      dialog.failure ??= error;
    } finally {
      // Outside the concurrency slot: the next request need not wait for these acknowledgements.
      await settleAll(dialog);
    }
    const answered = await this.ensureFinalMessage(id, dialog);
    this.audit(dialog, answered);
    deps.telemetry.consumed(consumer, (performance.now() - started) / 1000, answered);
    if (ackedOnArrival) return true;
    if (answered) {
      await message.ack().catch((error: unknown) => logger.warn({ err: error, id }, 'Could not acknowledge an agent request'));
      return true;
    }
    // The request is redelivered where the topic keeps it; TrustGraph's request topics are non-persistent,
    // so there it is gone (docs/reliability.md).
    await message.nack().catch(() => {});
    return false;
  }

  /** Which bound a request of `bytes` would pass if it waited for a slot now; undefined when it may wait (or need not). */
  private overloaded(bytes: number): 'count' | 'bytes' | undefined {
    const { limit, maxQueued, maxQueuedBytes } = this.ctx.deps;
    if (!limit.full) return undefined;
    if (limit.queued >= (maxQueued ?? DEFAULT_MAX_QUEUED)) return 'count';
    return limit.queuedBytes + bytes > (maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES) ? 'bytes' : undefined;
  }

  /** Too many requests, or too many bytes of them, wait for a slot already: refuse at once, with an error that says so. */
  private async refuseOverloaded(id: string, dialog: DialogState, bound: 'count' | 'bytes'): Promise<void> {
    const { deps } = this.ctx;
    dialog.events = this.telemetryOf(undefined, id);
    const { queued, queuedBytes, limit } = deps.limit;
    const waiting =
      bound === 'count'
        ? `${queued} requests are waiting for one of its ${limit} concurrency slots (limit ${deps.maxQueued ?? DEFAULT_MAX_QUEUED})`
        : `${queued} requests holding ${queuedBytes} bytes are waiting for one of its ${limit} concurrency slots ` +
          `(limit ${deps.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES} bytes, --max-queued-bytes)`;
    const text = `the agent is overloaded: ${waiting}; the request was refused, send it again later`;
    this.ctx.logger.warn({ id, queued, queuedBytes, bound }, 'Refusing a request: too many, or too many bytes, are waiting for a slot');
    deps.telemetry.overloaded();
    dialog.result = { outcome: 'error', stateBefore: '', error: text };
    await this.output(id, dialog).respond(errorResponse(text));
  }

  private async run(message: IncomingMessage, id: string, dialog: DialogState, kept: boolean): Promise<void> {
    const { workspace, flow } = this.ctx.definition;
    const { deps, logger } = this.ctx;
    const ask = await this.decode(message, id, dialog);
    if (ask === undefined) return;
    if (ask.request.history.length > 0 && !kept) deps.telemetry.next('received');
    const output = this.output(id, dialog, ask.request);
    try {
      const configured = deps.registryFor(workspace);
      dialog.events = this.telemetryOf(ask, id);
      const verdict = deps.gate?.check(this.ctx.definition, ask, message.properties, configured, deps.patternsFor?.(workspace)) ?? {};
      const registry = verdict.withdrawnTools ? withoutTools(configured, new Set(verdict.withdrawnTools.map((w) => w.tool))) : configured;
      // The policy's group hierarchy widens the groups once, here, for every pattern and the audit.
      const effective: AgentAsk = verdict.groups ? { ...ask, groups: verdict.groups } : ask;
      if (effective !== ask) dialog.events = this.telemetryOf(effective, id);
      const events = dialog.events;
      if (verdict.withdrawnGroups) events.groupsWithdrawn(verdict.withdrawnGroups);
      if (verdict.withdrawnTools) events.toolsWithdrawn(verdict.withdrawnTools);
      if (verdict.fallbackGroups) events.groupsFellBack(verdict.fallbackGroups);
      if (await this.refused(verdict, effective, output, events, id, dialog)) return;
      dialog.result = await runAgentRequest(
        {
          workspace,
          flow,
          registry,
          prompt: this.ctx.prompt,
          tools: this.ctx.tools,
          output,
          events,
          logger: logger.child({ id }),
          ...withContext(deps.additionalContextFor?.(workspace)),
          settings: {
            maxIterations: deps.maxIterations,
            strictTools: deps.strictTools,
            undeclaredArguments: deps.undeclaredArguments ?? 'drop',
          },
        },
        deps.patternsFor?.(workspace),
        effective,
      );
    } catch (error) {
      // A hook or the gate threw, or even the iteration's error response could not be sent.
      dialog.failure ??= error;
      if (dialog.ended) {
        logger.error({ id, err: error }, `Failure after the dialog ended: ${describeFailure(error).text}`);
      }
    }
  }

  /** The request as an ask (its defaults applied, once); undefined when it is too large or cannot be decoded, then answered with an error. */
  private async decode(message: IncomingMessage, id: string, dialog: DialogState): Promise<AgentAsk | undefined> {
    const { deps } = this.ctx;
    if (message.payload.length > this.maxRequestBytes) {
      dialog.events = this.telemetryOf(undefined, id);
      const text =
        `the request is ${message.payload.length} bytes, over the limit of ${this.maxRequestBytes} bytes ` +
        `(--max-request-bytes; by default three quarters of what the ${deps.transport.kind} transport carries in one message); ` +
        budgetFor(deps.transport).remedy;
      this.fail(dialog, { reason: 'too-large', text }, id);
      dialog.result = { outcome: 'error', stateBefore: '', error: text };
      await this.output(id, dialog).respond(errorResponse(text));
      return undefined;
    }
    try {
      // Everything after reads `ask.groups` and `ask.state`.
      return askOf(agentRequestCodec.decode(message.payload));
    } catch (error) {
      dialog.events = this.telemetryOf(undefined, id);
      const failure = describeFailure(error);
      this.fail(dialog, failure, id, `Refusing an agent request that cannot be decoded: ${failure.text}`);
      dialog.result = { outcome: 'error', stateBefore: '', error: failure.text };
      await this.output(id, dialog).respond(errorResponse(failure.text, ''));
      return undefined;
    }
  }

  /**
   * Acts on the gate's verdict: unknown groups and states are reported; a refusal is answered (or handed to a
   * subagent's fan-in, or left unanswered when its id may not be its sender's). True when the request was refused.
   */
  private async refused(verdict: GateVerdict, ask: AgentAsk, output: IterationOutput, events: RequestTelemetry, id: string, dialog: DialogState): Promise<boolean> {
    const { logger } = this.ctx;
    const { workspace } = this.ctx.definition;
    if (verdict.unknownState !== undefined) events.stateUnknown(verdict.unknownState);
    const { unknownGroups } = verdict;
    if (unknownGroups) {
      events.groupsUnknown(unknownGroups.groups, unknownGroups.action);
      if (unknownGroups.firstSeen.length > 0) {
        logger.warn(
          { id, groups: firstNames(unknownGroups.firstSeen), count: unknownGroups.firstSeen.length },
          `Request names tool group(s) no tool of workspace ${JSON.stringify(workspace)} is in: ` +
            `${listNames(unknownGroups.firstSeen)} (they match nothing; logged once per name; ` +
            'the group policy\'s "unknown-groups": "reject" refuses such requests, "ignore" stops this warning)',
        );
      }
    }
    const { refusal } = verdict;
    if (!refusal) return false;
    logger.warn({ id, kind: refusal.kind, reason: refusal.reason }, `Request refused: ${refusal.message}`);
    if (refusal.unknownGroups) events.groupsUnknown(refusal.unknownGroups, 'rejected');
    events.refused(refusal);
    if (refusal.unanswered) {
      logger.warn({ id, reason: refusal.reason }, 'No error response for this refusal: the id it carries may name a conversation its sender did not start');
      dialog.unanswered = true;
      return true;
    }
    if (isSubagent(ask.request) && output.aggregate) {
      // Its supervisor's fan-in ends the conversation once (the synthesis, this error among the results):
      // an error to the client here would be one final message too many. Straight to the aggregation
      // topic, as the request topic would refuse the completion again.
      await output.aggregate('completion', makeAgentRequest(subagentCompletion(ask.request, `Error: ${refusal.message}`)));
      dialog.result = { outcome: 'next', stateBefore: ask.state, error: refusal.message };
      return true;
    }
    await output.respond(errorResponse(refusal.message));
    return true;
  }

  /** Where one request's messages go (iteration-output.ts). */
  private output(id: string, dialog: DialogState, request?: AgentRequest): IterationOutput {
    return iterationOutput(this.ctx, id, dialog, request);
  }

  /** The request's telemetry (metrics, audit). */
  private telemetryOf(ask: AgentAsk | undefined, id: string): RequestTelemetry {
    return this.ctx.deps.telemetry.request(this.ctx.definition, ask, id);
  }

  /**
   * After the iteration: if its final message is not with the broker, send the small error response that
   * always fits. False when no final message could be published (the caller nacks).
   */
  private async ensureFinalMessage(id: string, dialog: DialogState): Promise<boolean> {
    const { logger } = this.ctx;
    // Ended, or handed over to its next iteration (which ends the dialog): a second final message would be one
    // too many, so a failure of some other message of this iteration is only logged.
    if (dialog.unanswered) return true;
    if (dialog.delivered || dialog.result?.outcome === 'next') {
      if (dialog.failure !== undefined) {
        const { reason, text } = describeFailure(dialog.failure);
        logger.warn({ id, reason, err: dialog.failure }, `A message of this iteration could not be published: ${text}`);
      }
      return true;
    }
    const failure = describeFailure(dialog.failure ?? new DialogError('the iteration ended without a final message'));
    if (finalMayHaveBeenSent(dialog)) {
      logger.error(
        { id, err: dialog.finalFailure, reason: failure.reason },
        `Could not answer an agent request: the broker stayed unreachable (${failure.text}); negatively acknowledging it`,
      );
      dialog.events?.failed(failure);
      this.failedEnding(dialog, failure, 'unanswered');
      return false;
    }
    this.fail(dialog, failure, id, `Agent request failed (${failure.reason}); ending the dialog with an error: ${failure.text}`);
    try {
      const payload = agentResponseCodec.encode(errorResponse(failure.text));
      await this.ctx.publisher.publish(this.ctx.producers.response, { payload, properties: { id } }, 'always', FINAL_MESSAGE_RETRY_MS);
      this.failedEnding(dialog, failure, 'error');
      return true;
    } catch (error) {
      logger.error(
        { id, err: error, reason: failure.reason },
        `Could not publish the error response either (${describeFailure(error).text}); negatively acknowledging the request`,
      );
      this.failedEnding(dialog, failure, 'unanswered');
      return false;
    }
  }

  /** Log, count and remember a failure (audited when the request's handling ends). */
  private fail(dialog: DialogState, failure: Failure, id: string, logText?: string): void {
    this.ctx.logger.error({ id, reason: failure.reason }, logText ?? `Refusing an agent request: ${failure.text}`);
    dialog.events?.failed(failure);
  }

  private failedEnding(dialog: DialogState, failure: Failure, outcome: 'error' | 'unanswered'): void {
    dialog.result = { ...(dialog.result ?? { stateBefore: '' }), outcome, error: failure.text };
  }

  private audit(dialog: DialogState, answered: boolean): void {
    const result: IterationResult = dialog.result ?? { outcome: answered ? 'error' : 'unanswered', stateBefore: '' };
    try {
      dialog.events?.done(result);
    } catch (error) {
      this.ctx.logger.error({ err: error }, `Could not record the end of an iteration: ${describeFailure(error).text}`);
    }
  }
}

function withContext(additionalContext: string | undefined): { additionalContext?: string } {
  return additionalContext === undefined ? {} : { additionalContext };
}
