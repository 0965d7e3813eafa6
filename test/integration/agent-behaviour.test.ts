/** The agent behaviour suite (test/behaviour/agent-behaviour.ts) on the real broker, over WebSocket. */
import { agentBehaviourSuite } from '../behaviour/agent-behaviour.js';
import { brokerUrls } from '../support/transport-contract.js';

agentBehaviourSuite({ transport: 'websocket', webSocketUrl: brokerUrls().webSocketUrl });
