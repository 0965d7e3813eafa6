/** The supervisor fan-in suite (test/behaviour/supervisor-fan-in.ts) in memory. */
import { supervisorFanInSuite } from '../../behaviour/supervisor-fan-in.js';

supervisorFanInSuite({ transport: 'memory' });
