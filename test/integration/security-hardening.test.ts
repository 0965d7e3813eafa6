/** The security-hardening suite (test/behaviour/security-hardening.ts) on the real broker, on every transport that loads. */
import { securityHardeningSuite } from '../behaviour/security-hardening.js';
import { brokerUrls } from '../support/transport-contract.js';
import { testTransports } from '../support/transports.js';

for (const transport of testTransports()) securityHardeningSuite({ transport, webSocketUrl: brokerUrls().webSocketUrl });
