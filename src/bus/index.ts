/**
 * The message bus as the rest of the agent sees it, whichever backend carries it: the `Transport` interface,
 * its errors, topic names, the request/response client, the waits for a broker that is not up yet, and the
 * backend descriptor type. The backends themselves (pulsar/, kafka/, rabbitmq/) are listed in src/backends.ts;
 * memory/ is the in-process bus of the unit tests.
 */
export { BackendOptionsError, type OptionSpec, positiveInt, shownBroker } from './backend.js';
export { BrokerProbe } from './broker-probe.js';
export { CallSlots, type SlotTicket } from './call-slots.js';
export { AdminApiError, CallQueueTimeoutError, FrameTooLargeError, NotConnectedError, RequestAbandonedError, RequestTimeoutError, TransportError } from './errors.js';
export { DEFAULT_HEDGE, HEDGE_OUTCOMES, HedgePolicy, type HedgeOutcome, type HedgeSettings } from './hedge-policy.js';
export { RequestClient } from './request-client.js';
export {
  aggregationTopic,
  DEFAULT_AGGREGATION_TOPIC,
  flowSubscriptionName,
  queueId,
  queueToTopic,
  requestResponseSubscriptionName,
  splitPulsarTopic,
  topicAdminUrl,
} from './topics.js';
export type {
  Consumer,
  IncomingMessage,
  OutgoingMessage,
  Producer,
  Properties,
  Transport,
  TransportStatus,
} from './transport.js';
export { untilBrokerUp } from './until-broker-up.js';
export { whenConnected } from './when-connected.js';
