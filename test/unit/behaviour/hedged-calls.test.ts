/** The hedged-calls suite (test/behaviour/hedged-calls.ts) in memory. */
import { hedgedCallsSuite } from '../../behaviour/hedged-calls.js';

hedgedCallsSuite({ transport: 'memory' });
