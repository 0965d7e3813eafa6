/** The security-hardening suite (test/behaviour/security-hardening.ts) in memory: the whole app, no broker. */
import { securityHardeningSuite } from '../../behaviour/security-hardening.js';

securityHardeningSuite({ transport: 'memory' });
