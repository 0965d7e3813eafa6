/** The observability suite (test/behaviour/observability.ts) on the real broker, on every transport that loads. */
import { observabilitySuite } from '../behaviour/observability.js';
import { brokerUrls } from '../support/transport-contract.js';
import { testTransports } from '../support/transports.js';

for (const transport of testTransports()) observabilitySuite({ transport, webSocketUrl: brokerUrls().webSocketUrl });
