/** The kept-next suite (test/behaviour/kept-next.ts) in memory. */
import { keptNextSuite } from '../../behaviour/kept-next.js';

keptNextSuite({ transport: 'memory' });
