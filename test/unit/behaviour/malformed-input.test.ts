/** The malformed-input suite (test/behaviour/malformed-input.ts) in memory. */
import { malformedInputSuite } from '../../behaviour/malformed-input.js';

malformedInputSuite({ transport: 'memory' });
