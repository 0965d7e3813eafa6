/**
 * What a request must pass before it runs: the workspace's group policy (TG-13, docs/requirements.md) with its initial states and
 * the patterns a client may name, the
 * iteration signature, and — under `--strict-states` — a state some tool of the workspace knows.
 * The gate counts nothing: it returns a verdict (the refusal with its reason, denied groups and escalation
 * label; a state no tool knows, even when it is let through) that the request's telemetry records.
 */
import type { Properties } from '../bus/transport.js';
import { queueToTopic } from '../bus/topics.js';
import type { FlowDefinition } from '../config/flows.js';
import type { WorkspaceChange } from '../config/config-watcher.js';
import type { AggregationCheck, GateVerdict, RequestGate, UnknownGroups } from '../flow/ports.js';
import type { ToolRegistry } from '../tools/registry/registry.js';
import type { AgentAsk } from '../tools/registry/selection.js';
import type { AgentRequest } from '../wire/index.js';
import type { FanInKind } from '../agent/patterns/fan-in-messages.js';
import {
  checkGroups,
  checkInitialState,
  DEFAULT_UNKNOWN_GROUPS,
  effectiveGroups,
  isAllowed,
  parsePolicy,
  unknownGroupsOf,
  type EffectiveGroups,
  type GroupPolicy,
  type UnknownGroupsMode,
} from './group-policy.js';
import type { IterationSigner, Verdict } from './iteration-signature.js';
import type { LoadReader } from './group-availability.js';
import { fallbackCandidates, splitOptIn, type RecommendationReader } from './group-fallback.js';
import { normalizeRequestGroups, WILDCARD } from '../tools/registry/selection.js';
import { checkPattern, DEFAULT_ALLOWED_PATTERNS } from './pattern-policy.js';
import type { PatternCatalog } from '../agent/patterns/catalog.js';
import { listNames, MAX_LISTED_NAME_LENGTH } from '../errors/error-text.js';

export interface SecurityGateOptions {
  policyConfigType: string;
  signer?: IterationSigner;
  strictStates: boolean;
  telemetry: GateTelemetry;
  /** How TrustGraph's services have been answering lately, for the policy's load rules. */
  load?: LoadReader;
  /** What conversations ended with an answer under, for `"fallback-groups": "recommended"`. */
  recommendations?: RecommendationReader;
}

/** What the gate reports besides its verdicts (which the caller records). */
export interface GateTelemetry {
  /** The policy config type of a workspace was read: its problems (empty when it is fine). */
  policyRead(workspace: string, problems: readonly string[]): void;
}

const SIGNATURE_MESSAGES: Readonly<Record<Exclude<Verdict, 'ok'>, string>> = {
  missing: 'Iteration refused: it continues a conversation but carries no signature (was it written outside the agent?)',
  bad: 'Iteration refused: its signature does not match its request, workspace, flow and id (was it modified or moved?)',
  stale: 'Iteration refused: its signature is older than the accepted age (--signing-max-age); start the conversation again',
  replayed: 'Iteration refused: this signed iteration was already processed (a replay)',
};

const AGGREGATION_SIGNATURE_MESSAGES: Readonly<Record<'missing' | 'bad' | 'stale', string>> = {
  missing: 'it carries no signature (was it written outside the agent?)',
  bad: 'its signature does not match its request, workspace, flow and id (was it modified or moved?)',
  stale: 'its signature is older than the aggregation timeout (a replay?)',
};

/** Unknown group names remembered per workspace for logging once; past this, every further one is logged. */
const REMEMBERED_UNKNOWN_GROUPS = 1000;

export class SecurityGate implements RequestGate {
  private readonly policies = new Map<string, GroupPolicy | undefined>();
  private readonly problems = new Map<string, readonly string[]>();
  /** Per workspace: unknown group names already logged (forgotten when the workspace's config changes). */
  private readonly reportedUnknown = new Map<string, Set<string>>();

  constructor(private readonly options: SecurityGateOptions) {}

  /** What the policy's load rules read (the listing's why-answer reads it too). */
  get load(): LoadReader | undefined {
    return this.options.load;
  }

  /** Keep each workspace's policy current (called on every config change). */
  onConfig(change: WorkspaceChange): void {
    // A tool may now be in a group that was unknown: report again what is still unknown.
    this.reportedUnknown.delete(change.workspace);
    if (!change.changedTypes.includes(this.options.policyConfigType)) return;
    const parsed = parsePolicy(change.workspace, change.snapshot[this.options.policyConfigType] ?? {});
    const { policy } = parsed;
    const problems = [...parsed.problems];
    if (policy?.initialStates && !this.options.signer) {
      problems.push(
        `workspace "${change.workspace}": the group policy's initial-states are checked on first requests only; without ` +
          '--signing-key a client can send a made-up history and skip them',
      );
    }
    this.policies.set(change.workspace, policy);
    this.problems.set(change.workspace, problems);
    this.options.telemetry.policyRead(change.workspace, problems);
  }

  onWorkspaceDeleted(workspace: string): void {
    this.policies.delete(workspace);
    this.problems.delete(workspace);
    this.reportedUnknown.delete(workspace);
  }

  policyOf(workspace: string): GroupPolicy | undefined {
    return this.policies.get(workspace);
  }

  problemsOf(workspace: string): readonly string[] {
    return this.problems.get(workspace) ?? [];
  }

  check(flow: FlowDefinition, ask: AgentAsk, properties: Properties, registry: ToolRegistry, patterns?: PatternCatalog): GateVerdict {
    const policy = this.policies.get(flow.workspace);
    // `+fallback` is the opt-in, not a group, where the policy has fallback groups (group-fallback.ts).
    const split = policy?.fallbackGroups !== undefined && !ask.groups.wildcard ? splitOptIn(ask.groups.groups) : undefined;
    const asked: AgentAsk = split?.optedIn ? { ...ask, groups: { groups: split.groups, wildcard: false } } : ask;
    const verdict = this.verdict(flow, asked, properties, registry, patterns);
    if (verdict.refusal) return verdict;
    const options = this.options.load ? { load: this.options.load } : {};
    let effective = effectiveGroups(policy, asked.groups, registry.knownGroups, options);
    let fallbackGroups: string[] | undefined;
    if (policy?.fallbackGroups !== undefined && split?.optedIn && offersNothing(registry, effective, ask.state)) {
      const where = { workspace: flow.workspace, taskType: ask.request.task_type };
      fallbackGroups = fallbackCandidates(policy.fallbackGroups, where, (g) => g !== WILDCARD && isAllowed(policy, g), this.options.recommendations);
      const own = effective.withdrawn ?? [];
      effective = effectiveGroups(policy, normalizeRequestGroups(fallbackGroups), registry.knownGroups, options);
      const withdrawn = [...own, ...(effective.withdrawn ?? [])];
      if (withdrawn.length > 0) effective = { ...effective, withdrawn };
    }
    if (effective === ask.groups) return verdict;
    const { withdrawn, withdrawnTools, ...groups } = effective;
    return {
      ...verdict,
      groups,
      ...(withdrawn ? { withdrawnGroups: withdrawn } : {}),
      ...(withdrawnTools ? { withdrawnTools } : {}),
      ...(fallbackGroups ? { fallbackGroups } : {}),
    };
  }

  private verdict(flow: FlowDefinition, ask: AgentAsk, properties: Properties, registry: ToolRegistry, patterns?: PatternCatalog): GateVerdict {
    const { request, state } = ask;
    const policy = this.policies.get(flow.workspace);
    const decision = checkGroups(policy, ask.groups);
    if (!decision.allowed) {
      const reason = decision.wildcard ? 'policy-wildcard' : 'policy-group';
      return {
        refusal: {
          kind: 'group-policy',
          reason,
          message: decision.message,
          deniedGroups: decision.deniedGroups,
          ...(decision.wildcard ? { escalation: reason } : {}),
        },
      };
    }

    const unknown = unknownGroupsOf(ask.groups, registry.knownGroups, policy?.groupHierarchy);
    const mode = policy?.unknownGroups ?? DEFAULT_UNKNOWN_GROUPS;
    if (unknown.length > 0 && mode === 'reject') {
      return {
        refusal: {
          kind: 'unknown-group',
          reason: 'unknown-group',
          message:
            `Unknown tool group(s) ${listNames(unknown)}: no tool of workspace ${JSON.stringify(flow.workspace)} is in ` +
            `${unknown.length === 1 ? 'it' : 'them'} (known groups: ${listNames([...registry.knownGroups].sort(), 20)})`,
          unknownGroups: unknown,
        },
      };
    }
    const unknownGroups = unknown.length > 0 ? this.letThrough(flow.workspace, unknown, mode) : undefined;

    const initial = checkInitialState(policy, ask);
    if (!initial.allowed) {
      return { refusal: { kind: 'initial-state', reason: 'initial-state', message: initial.message, escalation: 'initial-state' } };
    }

    const pattern = checkPattern(flow.workspace, policy?.allowedPatterns ?? DEFAULT_ALLOWED_PATTERNS, patterns, request);
    if (!pattern.allowed) return { refusal: { kind: 'pattern', reason: 'pattern', message: pattern.message } };

    const { signer } = this.options;
    if (signer) {
      const route = { workspace: flow.workspace, flow: flow.flow, id: properties.id ?? 'unknown' };
      const persistent = flow.topics.request !== undefined && queueToTopic(flow.topics.request).startsWith('persistent://');
      const verdict = signer.verify(route, request, properties, { persistent });
      if (verdict !== 'ok') {
        const reason = `${verdict}-signature`;
        // A stale signature is genuine (a conversation that waited too long): its own client gets the error.
        const unanswered = verdict !== 'stale';
        return {
          refusal: { kind: 'signature', reason, message: SIGNATURE_MESSAGES[verdict], escalation: reason, ...(unanswered ? { unanswered } : {}) },
        };
      }
    }

    const found = unknownGroups === undefined ? {} : { unknownGroups };
    if (registry.knownStates.has(state)) return found;
    if (!this.options.strictStates) return { ...found, unknownState: state };
    return {
      ...found,
      unknownState: state,
      refusal: {
        kind: 'invalid-state',
        reason: 'invalid-state',
        message: `Invalid state "${state}": no tool of workspace "${flow.workspace}" uses it`,
      },
    };
  }

  /** The verdict on unknown groups that are let through; each name is reported (logged) once per workspace. */
  private letThrough(workspace: string, groups: readonly string[], mode: UnknownGroupsMode): UnknownGroups {
    if (mode === 'ignore') return { groups, action: 'ignored', firstSeen: [] };
    let reported = this.reportedUnknown.get(workspace);
    if (!reported) this.reportedUnknown.set(workspace, (reported = new Set()));
    const firstSeen = groups.filter((group) => !reported.has(group));
    // Bounded in count and in size: a name too long to list whole is not remembered (it is logged cut, each time).
    for (const group of firstSeen) if (reported.size < REMEMBERED_UNKNOWN_GROUPS && group.length <= MAX_LISTED_NAME_LENGTH) reported.add(group);
    return { groups, action: 'warned', firstSeen };
  }

  checkAggregation(flow: FlowDefinition, request: AgentRequest, properties: Properties, maxAgeMs: number, kind: FanInKind): AggregationCheck {
    const { signer } = this.options;
    if (!signer) return {};
    const route = { workspace: flow.workspace, flow: flow.flow, id: properties.id ?? 'unknown', aggregation: kind };
    const { verdict, signedAt } = signer.verifyHeld(route, request, properties, maxAgeMs);
    if (verdict === 'ok') return { signedAt };
    return { refused: { reason: `${verdict}-signature`, message: AGGREGATION_SIGNATURE_MESSAGES[verdict] } };
  }

  nextProperties(flow: FlowDefinition, request: AgentRequest, id: string, aggregation?: FanInKind): Properties {
    const route = { workspace: flow.workspace, flow: flow.flow, id, ...(aggregation ? { aggregation } : {}) };
    return this.options.signer ? this.options.signer.sign(route, request) : {};
  }
}

/** Whether these groups give no tool in `state`, once the withdrawn tools are left out. */
function offersNothing(registry: ToolRegistry, effective: EffectiveGroups, state: string): boolean {
  const gone = new Set((effective.withdrawnTools ?? []).map((w) => w.tool));
  return registry.offer({ groups: effective, state }).tools.every((tool) => gone.has(tool.name));
}
