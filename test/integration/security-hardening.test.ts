/** The security-hardening suite (test/behaviour/security-hardening.ts) on the real broker, over WebSocket. */
import { securityHardeningSuite } from '../behaviour/security-hardening.js';
import { brokerUrls } from '../support/transport-contract.js';

securityHardeningSuite({ transport: 'websocket', webSocketUrl: brokerUrls().webSocketUrl });
