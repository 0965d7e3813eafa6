/**
 * The floor's "agent": a separate process that echoes every message of a request topic onto a response
 * topic with the same `id` property, through the same WebSocket transport as the agent (a Shared
 * subscription in, one producer out, ack before reply like the agent's stand-ins). Spawned with an IPC
 * channel: it sends `{type: 'ready'}` once subscribed and exits when the parent goes away.
 *
 * Environment: TG_BENCH_BROKER (the broker's addresses, JSON), TG_BENCH_REQUEST_TOPIC, TG_BENCH_RESPONSE_TOPIC
 * (full Pulsar-style topics), TG_BENCH_TRANSPORT (default websocket).
 */
import { createBenchTransport, type BenchBrokerAddress, type BenchTransportKind } from './transport.js';

async function main(): Promise<void> {
  const broker = process.env.TG_BENCH_BROKER;
  const requestTopic = process.env.TG_BENCH_REQUEST_TOPIC;
  const responseTopic = process.env.TG_BENCH_RESPONSE_TOPIC;
  if (!broker || !requestTopic || !responseTopic) throw new Error('TG_BENCH_BROKER, TG_BENCH_REQUEST_TOPIC and TG_BENCH_RESPONSE_TOPIC are required');
  const kind = (process.env.TG_BENCH_TRANSPORT ?? 'websocket') as BenchTransportKind;
  const transport = await createBenchTransport(kind, JSON.parse(broker) as BenchBrokerAddress);
  const producer = await transport.createProducer(responseTopic);
  await transport.subscribe({
    topic: requestTopic,
    subscription: 'bench-echo',
    subscriptionType: 'Shared',
    handler: async (message) => {
      await message.ack();
      await producer.send({ payload: message.payload, properties: { id: message.properties.id ?? '' } });
    },
  });
  process.send?.({ type: 'ready' });
  const stop = (): void => {
    void transport.close().finally(() => process.exit(0));
  };
  process.on('disconnect', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
