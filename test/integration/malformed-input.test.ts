/** The malformed-input suite (test/behaviour/malformed-input.ts) on the real broker, on every transport that loads. */
import { malformedInputSuite } from '../behaviour/malformed-input.js';
import { brokerUrls } from '../support/transport-contract.js';
import { testTransports } from '../support/transports.js';

for (const transport of testTransports()) malformedInputSuite({ transport, webSocketUrl: brokerUrls().webSocketUrl });
