import { groupQuestionsSuite } from '../../behaviour/group-questions.js';

groupQuestionsSuite({ transport: 'memory' });
