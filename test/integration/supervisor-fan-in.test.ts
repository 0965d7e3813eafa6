/** The supervisor fan-in suite (test/behaviour/supervisor-fan-in.ts) on the real broker, on every transport that loads. */
import { supervisorFanInSuite } from '../behaviour/supervisor-fan-in.js';
import { brokerUrls } from '../support/transport-contract.js';
import { testTransports } from '../support/transports.js';

for (const transport of testTransports()) supervisorFanInSuite({ transport, webSocketUrl: brokerUrls().webSocketUrl });
