/** The observability suite (test/behaviour/observability.ts) in memory: the whole app, scraped over HTTP, no broker. */
import { observabilitySuite } from '../../behaviour/observability.js';

observabilitySuite({ transport: 'memory' });
