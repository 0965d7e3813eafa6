/**
 * Clients for `tool-service` tools, one per (request queue, response queue) pair, created on first use and
 * shared by every flow, as TrustGraph caches them (subscription `<processor id>--tool-service--<uuid>`).
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

type Client = RequestClient<ToolServiceRequest, ToolServiceResponse>;

export class ToolServiceClients {
  private readonly clients = new Map<string, Promise<Client>>();

  constructor(
    private readonly options: { transport: Transport; processorId: string; timeoutMs: number; gapTimeoutMs?: number; logger: Logger },
  ) {}

  get(descriptor: ToolServiceDescriptor): Promise<Client> {
    const key = `${descriptor.requestQueue}\u0000${descriptor.responseQueue}`;
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
    const client = new RequestClient({
      transport: this.options.transport,
      requestTopic: queueToTopic(descriptor.requestQueue),
      responseTopic: queueToTopic(descriptor.responseQueue),
      requestCodec: toolServiceRequestCodec,
      responseCodec: toolServiceResponseCodec,
      subscriptionName: `${this.options.processorId}--tool-service--${randomUUID()}`,
      timeoutMs: this.options.timeoutMs,
      ...(this.options.gapTimeoutMs === undefined ? {} : { gapTimeoutMs: this.options.gapTimeoutMs }),
      logger: this.options.logger,
    });
    await client.start();
    return client;
  }
}
