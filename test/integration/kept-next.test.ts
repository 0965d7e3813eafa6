/** The kept-next suite (test/behaviour/kept-next.ts) on the real broker, on every transport that loads. */
import { keptNextSuite } from '../behaviour/kept-next.js';
import { brokerUrls } from '../support/transport-contract.js';
import { testTransports } from '../support/transports.js';

for (const transport of testTransports()) keptNextSuite({ transport, webSocketUrl: brokerUrls().webSocketUrl });
