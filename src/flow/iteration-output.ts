/**
 * Where one request's messages go: responses, the `next` request and explainability triples, each sized to
 * what the transport carries before it is handed to its producer, and tracked in the request's dialog so
 * that the handler can make sure the client gets exactly one final message.
 */
import type { Logger } from 'pino';
import type { Producer, Properties, Transport } from '../bus/index.js';
import type { FlowDefinition } from '../config/index.js';
import {
  budgetFor,
  checkFits,
  conversationDocuments,
  type DocumentSink,
  type FanInKind,
  fanInMessage,
  fitResponse,
  fitTriples,
  type IterationOutput,
  type MessageBudget,
  nextRequestBudget,
} from '../agent/index.js';
import { agentRequestCodec, triplesCodec, type AgentRequest, type AgentResponse } from '../wire/index.js';
import { settle, track, type DialogState } from './dialog.js';
import { offCriticalPath } from './off-critical-path.js';
import type { FlowTelemetry, RequestGate } from './ports.js';
import { FINAL_MESSAGE_RETRY_MS, type PublishPolicy } from './publish-policy.js';

/** What every request of one flow shares. */
export interface FlowOutput {
  definition: FlowDefinition;
  transport: Transport;
  logger: Logger;
  producers: { response: Producer; next: Producer; explainability?: Producer; aggregation?: Producer };
  publisher: PublishPolicy;
  gate?: RequestGate;
  telemetry: FlowTelemetry;
  /** Where the iteration's librarian documents go, when the flow has librarian queues. */
  documents?: DocumentSink;
  /** `--max-request-bytes`: the agent's own `next` requests stay within what it accepts. */
  maxRequestBytes?: number;
  /** Runs a `next` request on this replica instead of publishing it; false when it must go to the bus. */
  keepNext?: (payload: Buffer, properties: Properties) => boolean;
}

/** The output of one request; without `request` (refused before decoding) only `respond` and `next` work. */
export function iterationOutput(flow: FlowOutput, id: string, dialog: DialogState, request?: AgentRequest): IterationOutput {
  const { producers, logger, publisher } = flow;
  const properties = { id };
  const budget: MessageBudget = budgetFor(flow.transport, properties);
  const warn = (text: string): void => logger.warn({ id }, `Shortened a message to fit the transport: ${text}`);
  const explainability = producers.explainability;
  const documents = flow.documents;
  return {
    ...(documents && request ? { documents: conversationDocuments(documents) } : {}),
    respond: (response: AgentResponse) => {
      const payload = fitResponse(response, budget, warn);
      const final = response.end_of_dialog;
      if (final) dialog.ended = true;
      const window = final ? FINAL_MESSAGE_RETRY_MS : undefined;
      const publish = publisher.publish(producers.response, { payload, properties }, 'always', window).then(
        () => {
          if (final) dialog.delivered = true;
        },
        (error: unknown) => {
          if (final) dialog.finalFailure = error;
          throw error;
        },
      );
      return track(dialog.pending, publish);
    },
    fitsNext: (message: AgentRequest) => {
      const nextProperties = { ...(flow.gate?.nextProperties(flow.definition, message, id) ?? {}), id };
      return agentRequestCodec.encode(message).length <= nextRequestBudget(flow.transport, nextProperties, flow.maxRequestBytes).maxPayloadBytes;
    },
    next: async (message: AgentRequest) => {
      const nextProperties = { ...(flow.gate?.nextProperties(flow.definition, message, id) ?? {}), id };
      const payload = checkFits(
        agentRequestCodec.encode(message),
        "this conversation's next request (question, history and session id)",
        nextRequestBudget(flow.transport, nextProperties, flow.maxRequestBytes),
      );
      // This iteration's responses reach the client before anything of the next iteration can.
      await settle(dialog.pending);
      if (flow.keepNext?.(payload, nextProperties)) {
        flow.telemetry.next('kept');
        return;
      }
      await publisher.whenConnected();
      await publisher.publish(producers.next, { payload, properties: nextProperties }, 'marked');
      flow.telemetry.next('published');
    },
    ...(producers.aggregation
      ? {
          aggregate: async (kind: FanInKind, message: AgentRequest) => {
            const aggregation = producers.aggregation!;
            const signed = { ...(flow.gate?.nextProperties(flow.definition, message, id, kind) ?? {}), id };
            const outgoing = fanInMessage(kind, message, signed, Date.now());
            checkFits(outgoing.payload, 'the supervisor aggregation message', budgetFor(flow.transport, outgoing.properties));
            await settle(dialog.pending);
            await publisher.whenConnected();
            await publisher.publish(aggregation, outgoing, 'unsent');
          },
        }
      : {}),
    ...(explainability && request
      ? {
          explain: (triples) =>
            track(
              dialog.background,
              offCriticalPath(() => {
                const payload = fitTriples((t) => triplesCodec.encode(t), triples, budget, warn);
                return payload ? explainability.send({ payload, properties }) : Promise.resolve();
              }).catch((error: unknown) => {
                // Provenance never fails a dialog.
                logger.warn({ err: error, id }, 'Could not publish explainability triples; the dialog goes on');
              }),
            ),
        }
      : {}),
  };
}
