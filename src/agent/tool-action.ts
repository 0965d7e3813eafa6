/**
 * Running the action the model chose: the offered set enforced, the arguments validated against the tool's
 * declared ones (undeclared ones dropped, passed or refused), the tool run through its TrustGraph service, and
 * the state moved only on success. The outcome is the observation the model sees next.
 */
import { runTool, type SubTrace, type ToolSet } from '../tools/index.js';
import { errorMessage } from '../errors/index.js';
import { DialogError } from './errors.js';
import type { IterationContext } from './iteration.js';
import type { ParsedAction } from './react-output.js';
import { explainResponse } from './responses.js';
import { pythonStr } from '../wire/index.js';

export interface ActionOutcome {
  observation: string;
  nextState: string;
  /** The tool ran and succeeded. */
  ok: boolean;
  /** How long the tool ran, in milliseconds; 0 when it was not called. */
  toolMs: number;
  /** Why the step did not succeed (the tool's error, or why it was not called). */
  error?: string;
  /** The last explain entity of the tool's sub-trace, when it sent one. */
  subTrace?: string;
}

/** Longest explain id of a tool's sub-trace that is handed on (graph RAG's are `urn:trustgraph:question:<uuid>`). */
const MAX_SUB_TRACE_ID = 1024;

/** The outcome of a call that never reached the tool: the observation says why. */
function refused(observation: string, state: string): ActionOutcome {
  return { observation, nextState: state, ok: false, toolMs: 0, error: observation.replace(/^Error: /, '') };
}

/**
 * Enforce the offered set, validate the arguments, run the tool; the state moves only on success. With
 * `traceParent` (orchestrated iterations) the explain trace of the tool's service is forwarded to the client,
 * as TrustGraph's orchestrator does, deriving from `traceParent`.
 */
export async function act(
  ctx: IterationContext,
  action: ParsedAction,
  toolSet: ToolSet,
  state: string,
  traceParent?: string,
): Promise<ActionOutcome> {
  const tool = toolSet.get(action.name);
  if (!tool) {
    ctx.events.actionDenied(action.name, toolSet, ctx.registry.get(action.name) !== undefined);
    if (ctx.settings.strictTools) throw new DialogError(`No action for ${action.name}!`);
    return refused(notOfferedObservation(action.name, toolSet), state);
  }

  const validation = tool.validator.validate(action.args);
  // The validator reports each argument the tool does not declare as a warning naming it.
  const undeclared = validation.warnings.flatMap((w) => (w.argument === null ? [] : [w.argument]));
  const mode = ctx.settings.undeclaredArguments ?? 'drop';
  if (undeclared.length > 0) {
    ctx.events.argumentsUndeclared(tool, undeclared, mode === 'drop' ? 'dropped' : mode === 'pass' ? 'passed' : 'rejected');
  }
  if (!validation.ok || (mode === 'reject' && undeclared.length > 0)) {
    const problems = [
      ...(validation.ok ? [] : validation.errors.map((e) => e.message)),
      ...(mode === 'reject' ? validation.warnings.map((w) => w.message) : []),
    ];
    ctx.events.argumentsInvalid(tool, problems);
    return refused(
      `Error: invalid arguments for tool "${tool.name}": ${problems.join('; ')}. The tool was not called; fix the arguments and try again.`,
      state,
    );
  }

  let subTrace: string | undefined;
  const trace: SubTrace | undefined = traceParent === undefined ? undefined : {
    parentUri: traceParent,
    async explain(event) {
      // The id is the service's: one too long for a message (and for our triples) is not handed on.
      if (event.explainId.length > MAX_SUB_TRACE_ID) {
        ctx.logger.warn({ tool: tool.name, idLength: event.explainId.length }, 'Sub-trace explain id too long; not forwarded');
        return;
      }
      subTrace = event.explainId;
      await ctx.output.respond(explainResponse(event.explainId, [...event.triples], event.explainGraph));
    },
  };
  const traced = (): { subTrace?: string } => (subTrace !== undefined ? { subTrace } : {});
  const started = performance.now();
  try {
    const args = mode === 'drop' && undeclared.length > 0 ? withoutKeys(validation.value, undeclared) : validation.value;
    const observation = await runTool(tool, args, ctx.tools, trace);
    const toolMs = performance.now() - started;
    ctx.events.toolFinished(tool, toolMs / 1000, undefined);
    const next = ctx.registry.nextState(tool, state);
    if (next !== state) ctx.events.stateTransition(tool, state, next);
    return { observation, nextState: next, ok: true, toolMs, ...traced() };
  } catch (error) {
    const toolMs = performance.now() - started;
    const message = errorMessage(error);
    ctx.events.toolFinished(tool, toolMs / 1000, message);
    ctx.logger.info({ tool: tool.name, workspace: ctx.workspace, err: error }, `Tool failed: ${message}`);
    return { observation: `Error: ${message}`.trim(), nextState: state, ok: false, toolMs, error: message, ...traced() };
  }
}

function withoutKeys(args: Readonly<Record<string, unknown>>, names: readonly string[]): Record<string, unknown> {
  const drop = new Set(names);
  // fromEntries defines own properties, so a "__proto__" argument stays a plain key.
  return Object.fromEntries(Object.entries(args).filter(([name]) => !drop.has(name)));
}

export function notOfferedObservation(name: string, toolSet: ToolSet): string {
  if (toolSet.names.length === 0) {
    return `Error: tool "${name}" is not available, and no tools are available in this conversation's groups and state. Answer with "Final Answer:".`;
  }
  return `Error: tool "${name}" is not available in this conversation's groups and state. Available tools: ${toolSet.names.join(', ')}.`;
}

/** History arguments are a string map: each value as Python's `str()` would write it (docs/trustgraph-agent-notes.md §3.7). */
export function stringifyArguments(args: Readonly<Record<string, unknown>>): Record<string, string> {
  return Object.fromEntries(Object.entries(args).map(([name, value]) => [name, pythonStr(value)]));
}

/**
 * Hand a document to the librarian saver (never waits); its id when the save started, for the explain triples to
 * link. Empty text is not saved, as in TrustGraph.
 */
