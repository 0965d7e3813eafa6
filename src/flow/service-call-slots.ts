/**
 * The bound on requests in flight from this replica to each service request topic (`--service-max-in-flight`),
 * one CallSlots per topic (src/bus/call-slots.ts), shared by every flow and every tool service client that
 * calls it: a burst of calls waits here, in order, instead of on the broker, which drops what the service's
 * consumer has no room for on TrustGraph's non-persistent request topics.
 */
import { CallSlots } from '../bus/index.js';

/**
 * TrustGraph's services consume with the Pulsar client's default receiver queue of 1 000 messages, and the
 * client gives the broker its permits back in batches, once half of the queue has been taken; until then
 * the broker counts up to 499 of the messages the service already took as still holding room. So 500 requests
 * in flight from one caller always find room, whatever the service's pace. Several replicas calling one service
 * share its queue: then each should send at most 500 divided by the replicas.
 */
export const DEFAULT_SERVICE_MAX_IN_FLIGHT = 500;

/** What an operator can do about a call that waited its whole timeout for a slot. */
const ADVICE =
  'raise --service-max-in-flight (TG_AGENT_SERVICE_MAX_IN_FLIGHT) if the service can take more requests at once ' +
  '(a larger receiver queue, more consumers), or lower --concurrency so fewer calls wait';

/** The calls waiting for a slot to one request topic (`tg_agent_service_calls_waiting`). */
export interface ServiceCallsWaiting {
  readonly service: string;
  readonly topic: string;
  readonly waiting: number;
}

export class ServiceCallSlots {
  private readonly byTopic = new Map<string, CallSlots>();

  constructor(readonly limit: number = DEFAULT_SERVICE_MAX_IN_FLIGHT) {}

  /** The slots of `requestTopic`, named after the first `service` that asked for them (e.g. `prompt`, `tool-service`). */
  for(service: string, requestTopic: string): CallSlots {
    let slots = this.byTopic.get(requestTopic);
    if (!slots) {
      slots = new CallSlots({ limit: this.limit, service, advice: ADVICE });
      this.byTopic.set(requestTopic, slots);
    }
    return slots;
  }

  /** Every request topic called so far, with its calls waiting now. */
  waiting(): ServiceCallsWaiting[] {
    return [...this.byTopic].map(([topic, slots]) => ({ service: slots.service, topic, waiting: slots.queued }));
  }
}
