/** The agent behaviour suite (test/behaviour/agent-behaviour.ts) in memory: the real agent and stand-ins, no broker. */
import { agentBehaviourSuite } from '../../behaviour/agent-behaviour.js';

agentBehaviourSuite({ transport: 'memory' });
