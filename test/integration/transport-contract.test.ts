/**
 * The transport contract against the real broker, for every transport that can run here. A transport that
 * cannot is listed as a skipped test whose title says why.
 */
import { pino } from 'pino';
import { NativeTransport, loadPulsarClient, type PulsarClientModule } from '../../src/bus/native-transport.js';
import { WebSocketTransport } from '../../src/bus/websocket-transport.js';
import { brokerUrls, describeTransportContract } from '../support/transport-contract.js';

const { webSocketUrl, serviceUrl } = brokerUrls();
const logger = pino({ level: process.env.LOG_LEVEL ?? 'silent' });

describeTransportContract(
  'websocket',
  () =>
    new WebSocketTransport({
      url: webSocketUrl,
      logger,
      reconnect: { initialDelayMs: 100, maxDelayMs: 1000 },
      connectAttempts: 4,
    }),
  { frameLimitBytes: 1_048_576, quietMs: 500 },
);

let pulsarClient: PulsarClientModule | undefined;
let nativeSkip: string | undefined;
try {
  pulsarClient = await loadPulsarClient();
} catch (err) {
  const detail = err instanceof Error && err.cause instanceof Error ? err.cause.message.split('\n')[0] : String(err);
  nativeSkip = `pulsar-client binding not installed here (${detail})`;
}
console.info(
  `[transport-contract] ran: websocket (${webSocketUrl})` +
    (nativeSkip ? `; skipped: native — ${nativeSkip}` : `; ran: native (${serviceUrl})`),
);

describeTransportContract(
  'native',
  () => new NativeTransport(pulsarClient as PulsarClientModule, { serviceUrl, logger }),
  nativeSkip === undefined ? { quietMs: 500 } : { skip: nativeSkip },
);
