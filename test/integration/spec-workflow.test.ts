/** The spec workflow suite (test/behaviour/spec-workflow.ts) on the real broker, on every transport that loads. */
import { specWorkflowSuite } from '../behaviour/spec-workflow.js';
import { brokerUrls } from '../support/transport-contract.js';
import { testTransports } from '../support/transports.js';

for (const transport of testTransports()) specWorkflowSuite({ transport, webSocketUrl: brokerUrls().webSocketUrl });
