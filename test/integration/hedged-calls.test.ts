/** The hedged-calls suite (test/behaviour/hedged-calls.ts) on the real broker, on every transport that loads (Kafka and RabbitMQ: backend-suites.ts). */
import { hedgedCallsSuite } from '../behaviour/hedged-calls.js';
import { brokerUrls } from '../support/transport-contract.js';
import { testTransports } from '../support/transports.js';

for (const transport of testTransports()) hedgedCallsSuite({ transport, webSocketUrl: brokerUrls().webSocketUrl });
