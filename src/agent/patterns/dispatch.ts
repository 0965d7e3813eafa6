/**
 * One consumed AgentRequest, run by the pattern it names, as TrustGraph's orchestrator dispatches it:
 *
 * - a subagent's completion message is forwarded to the aggregation topic, keyed by its correlation id, where
 *   the owner of that key collects its siblings (fan-in.ts);
 * - a first request without a `pattern` is routed by the meta-router (meta-router.ts) when the workspace
 *   configures `agent-pattern` / `agent-task-type`; the decision travels in the `next` requests;
 * - the first iteration of an orchestrated conversation emits the pattern-decision explain entity;
 * - the pattern the request names runs it, taken from the table (pattern-table.ts); a pattern this agent does
 *   not run falls back to ReAct (react.ts), as TrustGraph's does.
 *
 * Without pattern config the meta-router decides `react` / `general` without asking the model, as
 * TrustGraph's does. A later iteration without a pattern (a client that keeps its own history, or TrustGraph's
 * ReAct agent's `next` request) runs ReAct.
 */
import type { AgentAsk } from '../../groups/index.js';
import { makeAgentRequest, type AgentRequest } from '../../wire/index.js';
import { DialogError } from '../errors.js';
import { sessionUriKey, provenanceUris } from '../explainability.js';
import { explain, withErrorResponse, type IterationContext, type IterationResult } from '../iteration.js';
import { buildPatternCatalog, type PatternCatalog } from '../orchestrator/catalog.js';
import { routeQuestion } from '../orchestrator/meta-router.js';
import { SUBAGENT_COMPLETION, type OrchestrationContext } from '../orchestration-fields.js';
import { patternDecisionTriples, patternUris } from '../orchestrator/pattern-explain.js';
import type { PatternContext } from './pattern.js';
import { PATTERN_IDS, patternFor } from './pattern-table.js';
import { UsageTracker } from '../usage.js';

const DEFAULT_CATALOG = buildPatternCatalog(PATTERN_IDS);

export function isSubagentCompletion(request: AgentRequest): boolean {
  return request.correlation_id !== '' && request.history.some((h) => h.step_type === SUBAGENT_COMPLETION);
}

export async function runAgentRequest(
  ctx: IterationContext,
  catalog: PatternCatalog | undefined,
  receivedAsk: AgentAsk,
): Promise<IterationResult> {
  const patterns = catalog ?? DEFAULT_CATALOG;
  const received = receivedAsk.request;
  if (isSubagentCompletion(received)) {
    return withErrorResponse(ctx, receivedAsk, async (result) => {
      if (!ctx.output.aggregate) {
        throw new DialogError(
          `a subagent completion for correlation ${received.correlation_id} arrived, but this flow has no aggregation ` +
            'topic, so no supervisor can collect it; the conversation ends here',
        );
      }
      await ctx.output.aggregate('completion', received);
      return { ...result, outcome: 'next', action: 'subagent-completion' };
    });
  }
  const usage = new UsageTracker();
  let request = received;
  const first = request.history.length === 0;
  if (request.pattern === '' && first) {
    const decision = await routeQuestion(request.question, patterns, ctx.prompt, usage);
    for (const fallback of decision.fallbacks) ctx.logger.warn({ fallback }, `Meta-router fell back: ${fallback}`);
    request = makeAgentRequest({ ...request, pattern: decision.pattern, task_type: decision.taskType, framing: decision.framing });
    ctx.events.patternChosen(decision.pattern, decision.taskType, true, decision.fallbacks);
  } else if (first) {
    ctx.events.patternChosen(request.pattern, request.task_type, false, []);
  }
  const pattern = patternFor(request.pattern);
  if (first && pattern.id !== request.pattern && request.pattern !== '') {
    ctx.logger.warn({ pattern: request.pattern }, `Pattern "${request.pattern}" is not run by this agent; running react`);
  }

  let patternDecisionUri: string | undefined;
  // TrustGraph emits the decision only when the request has a session id to name it by.
  if (first && request.pattern !== '' && request.session_id !== '') {
    const key = sessionUriKey(request.session_id);
    patternDecisionUri = patternUris.patternDecision(key);
    await explain(
      ctx,
      request,
      patternDecisionUri,
      patternDecisionTriples(key, provenanceUris.session(key), request.pattern, request.task_type),
    );
  }

  const orchestration: OrchestrationContext = {
    usage,
    ...(patternDecisionUri !== undefined ? { patternDecisionUri } : {}),
    // A subagent's session derives from its supervisor's decomposition.
    ...(request.parent_session_id !== '' ? { sessionParentUri: patternUris.decomposition(sessionUriKey(request.parent_session_id)) } : {}),
    terminationReasons: true,
  };
  const patternCtx: PatternContext = { ...ctx, catalog: patterns, orchestration };
  // Routing changed only the orchestration fields, never the groups or the state.
  const ask: AgentAsk = { ...receivedAsk, request };
  return withErrorResponse(patternCtx, ask, (result) => pattern.run(patternCtx, ask, result));
}

