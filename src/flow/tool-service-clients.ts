/**
 * Clients for `tool-service` tools, one per (request queue, response queue) pair, created on first use and
 * shared by every flow, as TrustGraph caches them (subscription `<processor id>--tool-service--<uuid>`). A
 * tool service may act, so its requests are never sent twice, unless its config entry says it is
 * `idempotent`: then they are hedged and sent again after a lost connection, as the read-only services are.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { queueToTopic, RequestClient, type Transport } from '../bus/index.js';
import {
  toolServiceRequestCodec,
  toolServiceResponseCodec,
  type ToolServiceRequest,
  type ToolServiceResponse,
} from '../wire/index.js';
import type { ToolServiceDescriptor } from '../tools/index.js';
import type { ServiceHedging } from './service-hedging.js';
import type { ServiceCallSlots } from './service-call-slots.js';

type Client = RequestClient<ToolServiceRequest, ToolServiceResponse>;

export class ToolServiceClients {
  private readonly clients = new Map<string, Promise<Client>>();

  constructor(
    private readonly options: {
      transport: Transport;
      processorId: string;
      timeoutMs: number;
      gapTimeoutMs?: number;
      logger: Logger;
      /** Absent: nothing is hedged. */
      hedging?: ServiceHedging;
      /** The bound on requests in flight to each request queue, shared with the flows; absent: none. */
      callSlots?: ServiceCallSlots;
    },
  ) {}

  get(descriptor: ToolServiceDescriptor): Promise<Client> {
    // An idempotent service's client hedges by the latency of that service alone.
    const key = `${descriptor.requestQueue}\u0000${descriptor.responseQueue}\u0000${descriptor.idempotent ? descriptor.key : ''}`;
    let client = this.clients.get(key);
    if (!client) {
      client = this.create(descriptor);
      this.clients.set(key, client);
      // A failed start is not cached: the next use tries again.
      client.catch(() => this.clients.delete(key));
    }
    return client;
  }

  async close(): Promise<void> {
    const clients = [...this.clients.values()];
    this.clients.clear();
    await Promise.allSettled(clients.map(async (c) => (await c).close()));
  }

  private async create(descriptor: ToolServiceDescriptor): Promise<Client> {
    const idempotent = descriptor.idempotent === true;
    const hedge = idempotent ? this.options.hedging?.policyFor(`tool-service:${descriptor.key}`) : undefined;
    const requestTopic = queueToTopic(descriptor.requestQueue);
    const slots = this.options.callSlots?.for('tool-service', requestTopic);
    const client = new RequestClient({
      transport: this.options.transport,
      requestTopic,
      responseTopic: queueToTopic(descriptor.responseQueue),
      requestCodec: toolServiceRequestCodec,
      responseCodec: toolServiceResponseCodec,
      subscriptionName: `${this.options.processorId}--tool-service--${randomUUID()}`,
      timeoutMs: this.options.timeoutMs,
      ...(this.options.gapTimeoutMs === undefined ? {} : { gapTimeoutMs: this.options.gapTimeoutMs }),
      repeatable: idempotent,
      ...(hedge ? { hedge } : {}),
      ...(slots ? { slots } : {}),
      logger: this.options.logger,
    });
    await client.start();
    return client;
  }
}
