/** The operator's view of a workspace's workflow: the linter and its run at each config change, "why is this tool hidden", the page. */
export { whyHidden } from './why-hidden.js';
export { WorkflowChecks } from './workflow-checks.js';
export { workflowGraph } from './workflow-graph.js';
export { type Finding, lintWorkflow } from './workflow-lint.js';
export { renderWorkflow, type WorkflowFormat } from './workflow-page.js';
export { configImpact, type ConfigImpact, impactBreaksUse, type Loss, type RecordedIteration, recordedIteration } from './config-impact.js';
