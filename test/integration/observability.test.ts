/** The observability suite (test/behaviour/observability.ts) on the real broker, over WebSocket. */
import { observabilitySuite } from '../behaviour/observability.js';
import { brokerUrls } from '../support/transport-contract.js';

observabilitySuite({ transport: 'websocket', webSocketUrl: brokerUrls().webSocketUrl });
