/** The spec's open questions on groups (test/behaviour/group-questions.ts) on the real broker, on every transport that loads. */
import { groupQuestionsSuite } from '../behaviour/group-questions.js';
import { brokerUrls } from '../support/transport-contract.js';
import { testTransports } from '../support/transports.js';

for (const transport of testTransports()) groupQuestionsSuite({ transport, webSocketUrl: brokerUrls().webSocketUrl });
