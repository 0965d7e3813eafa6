/** The spec workflow suite (test/behaviour/spec-workflow.ts) in memory. */
import { specWorkflowSuite } from '../../behaviour/spec-workflow.js';

specWorkflowSuite({ transport: 'memory' });
