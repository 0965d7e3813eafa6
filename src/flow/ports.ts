/**
 * What the running flows and the service around them need from outside, and the types those parts speak: the
 * request gate (implemented in src/security), the flows' and the service's telemetry (implemented once in
 * src/observability), and the runtime's settings and collaborators (`FlowRuntimeDeps`). Everything here is
 * types; the flow imports no implementation of them.
 */
import type { ServiceTimeoutSettings } from './service-timeouts.js';
import type { Failure, FanInKind, IterationEvents, IterationResult, PatternCatalog, UndeclaredArguments } from '../agent/index.js';
import type { Logger } from 'pino';
import type { Properties, Transport } from '../bus/index.js';
import type { FlowDefinition } from '../config/index.js';
import type { ToolServiceClients } from './tool-service-clients.js';
import type { ToolRegistry } from '../tools/index.js';
import type { AgentAsk, RequestedGroups, ToolWithdrawal, Withdrawal } from '../groups/index.js';
import type { ConcurrencyLimit } from './concurrency-limit.js';
import type { DocumentSaveOutcome } from './document-saver.js';
import type { HedgeTelemetry, ServiceHedging } from './service-hedging.js';
import type { ServiceCallSlots } from './service-call-slots.js';
import type { RecentRequests } from './recent-requests.js';
import type { RequestClaims } from './request-claims.js';

/** Why a request was refused before it ran. */
/** `published` / `received`: a `next` message through the broker; `kept`: one run on the replica that made it. */
export type NextEvent = 'published' | 'received' | 'kept';

export interface Refusal {
  kind: 'group-policy' | 'unknown-group' | 'initial-state' | 'pattern' | 'signature' | 'invalid-state';
  /** The metric label and audit detail: e.g. `policy-group`, `initial-state`, `stale-signature`. */
  reason: string;
  message: string;
  /** The requested groups no tool is in (unknown-group refusals). */
  unknownGroups?: readonly string[];
  /** The requested groups the policy denied (group-policy refusals). */
  deniedGroups?: readonly string[];
  /** Set when the refusal looks like a privilege escalation attempt: its reason label. */
  escalation?: string;
  /**
   * No error response is sent: the message is a forgery or a replay, and the dialog its `id` names belongs to
   * whoever started it (an error there would end a conversation the sender did not start). Logged and counted.
   */
  unanswered?: boolean;
}

/** Requested groups no tool of the workspace is in, let through (the policy's `unknown-groups` is not `reject`). */
export interface UnknownGroups {
  readonly groups: readonly string[];
  readonly action: 'ignored' | 'warned';
  /** Those of `groups` not reported before in this workspace (logged once each). */
  readonly firstSeen: readonly string[];
}

/**
 * What the gate found: a refusal, and — refused or not — a state no tool of the workspace knows, and requested
 * groups no tool is in.
 */
export interface GateVerdict {
  refusal?: Refusal;
  unknownState?: string;
  unknownGroups?: UnknownGroups;
  /** The groups the request runs with, when the workspace's policy changes them (group hierarchy, time windows). */
  groups?: RequestedGroups;
  /** Requested groups the policy's availability rules withdrew now (not in `groups`), with why. */
  withdrawnGroups?: readonly Withdrawal[];
  /** Single tools the policy's availability rules withdrew now: not offered whatever the groups. */
  withdrawnTools?: readonly ToolWithdrawal[];
  /** The request opted into fallback groups and its own gave it no tool: it runs with these (`groups` has them widened). */
  fallbackGroups?: readonly string[];
}

/** The verdict on one aggregation message: refused (reason label and what was wrong), or its signing time. */
export interface AggregationCheck {
  refused?: { reason: string; message: string };
  signedAt?: number;
}

/** What a request must pass before it is run (group policy, iteration signature); see src/security. */
export interface RequestGate {
  /** A refusal ends the dialog with an error; no refusal lets the request through. The gate counts nothing. */
  check(flow: FlowDefinition, ask: AgentAsk, properties: Properties, registry: ToolRegistry, patterns?: PatternCatalog): GateVerdict;
  /**
   * Extra properties for a `next` message (the iteration signature), or with `aggregation` for a message of the
   * supervisor's aggregation topic of that kind (signed apart: see iteration-signature.ts).
   */
  nextProperties(flow: FlowDefinition, request: AgentAsk['request'], id: string, aggregation?: FanInKind): Properties;
  /**
   * With signing, the check of a message of the supervisor's aggregation topic (signed as `nextProperties`
   * signs): its signature must verify and be at most `maxAgeMs` old. Absent: nothing is checked.
   */
  checkAggregation?(
    flow: FlowDefinition,
    request: AgentAsk['request'],
    properties: Properties,
    maxAgeMs: number,
    kind: FanInKind,
  ): AggregationCheck;
}

/** The telemetry of one consumed request: its iteration's events plus what happens around the iteration. */
export type RequestTelemetry = IterationEvents & {
  /** The gate found the request's state unknown to every tool of the workspace (counted even when let through). */
  stateUnknown(state: string): void;
  /** The policy's availability rules withdrew these of the request's groups (their tools are not offered). */
  groupsWithdrawn(withdrawals: readonly Withdrawal[]): void;
  /** The policy's availability rules withdrew these single tools (not offered whatever the groups). */
  toolsWithdrawn(withdrawals: readonly ToolWithdrawal[]): void;
  /** The request opted into fallback groups and runs with these, its own having given it no tool. */
  groupsFellBack(groups: readonly string[]): void;
  /** The request named groups no tool of the workspace is in; `rejected` ones are also `refused`. */
  groupsUnknown(groups: readonly string[], action: 'ignored' | 'warned' | 'rejected'): void;
  refused(refusal: Refusal): void;
  /** The iteration failed for a reason other than the dialog's own logic (too large, too deep, broker, ...). */
  failed(failure: Failure): void;
  /** Once per consumed message, after its last message is with the broker (or could not be). */
  done(result: IterationResult): void;
};

/** How a call to a TrustGraph service ended. */
export interface DownstreamOutcome {
  seconds: number;
  status: 'ok' | 'timeout' | 'error';
  errorType?: string;
}

/**
 * The flow's telemetry: TrustGraph's generic consumer, producer and downstream-call metrics, and one
 * `RequestTelemetry` per consumed request, and the hedged calls. Every method is required (`noTelemetry`
 * records nothing).
 */
export interface FlowTelemetry extends HedgeTelemetry {
  /** The telemetry of one consumed request; `ask` is undefined when the request could not be decoded. */
  request(flow: FlowDefinition, ask: AgentAsk | undefined, id: string): RequestTelemetry;
  /** A `next` message was handed to the broker / one arrived / one was kept on this replica (TrustGraph's agent counts none). */
  next(event: NextEvent): void;
  /** A request was refused because `maxQueued` requests were waiting. */
  overloaded(): void;
  consumed(consumer: string, seconds: number, ok: boolean): void;
  /** The request consumer is subscribed (before its first message). */
  subscribing(consumer: string): void;
  produced(producer: string): void;
  /** A call to a TrustGraph service ended; `targetService` is the request spec name, e.g. `prompt-request`. */
  downstream(targetService: string, outcome: DownstreamOutcome): void;
  /** A librarian document save ended (or was skipped). */
  documentSaved(outcome: DocumentSaveOutcome): void;
  /** A supervisor's fan-in ended (or a completion nobody waits for was turned away). */
  aggregationEnded(outcome: AggregationOutcome): void;
  /** An aggregation message failed its signature check and was dropped (`reason`: e.g. `bad-signature`). */
  aggregationRefused(reason: string): void;
}

/**
 * The parts of a config change, applied independently so that one failing never drops the others:
 * `tools` (the tool registry rebuild), `hooks` (the group policy, MCP discovery) and `flows`.
 */
export type ConfigPart = 'tools' | 'hooks' | 'flows' | 'patterns';

/** What the service reports besides its flows' telemetry (metrics). Every method is required (`noTelemetry` records nothing). */
export interface ServiceTelemetry extends FlowTelemetry {
  /** A workspace's tool registry was rebuilt; a throw fails the `tools` part of the config change. */
  registryRebuilt(registry: ToolRegistry, seconds: number): void;
  /** A config version was applied (as far as it could be). */
  configVersion(version: number): void;
  /** One part of a config change could not be applied (the others were); already logged. */
  configFailed(workspace: string, part: ConfigPart, message: string): void;
  workspaceDeleted(workspace: string): void;
}

export interface FlowRuntimeDeps {
  transport: Transport;
  processorId: string;
  /** How long to wait for each service's replies (service-timeouts.ts); the librarian's saves have their own. */
  timeouts: ServiceTimeoutSettings;
  maxIterations: number;
  strictTools: boolean;
  /** What happens to arguments a tool does not declare (see `UndeclaredArguments`). Default `drop`. */
  undeclaredArguments?: UndeclaredArguments;
  logger: Logger;
  registryFor(workspace: string): ToolRegistry;
  /** The workspace's `additional-context` value of the `--config-type` config type, if any. */
  additionalContextFor?(workspace: string): string | undefined;
  /** The workspace's `agent-pattern` / `agent-task-type` config (absent: the defaults, react / general). */
  patternsFor?(workspace: string): PatternCatalog | undefined;
  limit: ConcurrencyLimit;
  toolServices: ToolServiceClients;
  /** The hedge policies of the read-only services; absent: no call is hedged. */
  hedging?: ServiceHedging;
  /** The bound on requests in flight to each service request topic, shared with the tool service clients; absent: none. */
  callSlots?: ServiceCallSlots;
  /** Metrics and the audit trail. */
  telemetry: FlowTelemetry;
  /**
   * Requests whose payload is larger are refused with an error response. Default: three quarters of what the
   * transport can carry in one message, leaving room for what the conversation adds to its `next` request.
   */
  maxRequestBytes?: number;
  gate?: RequestGate;
  /**
   * How long a publish that failed because the broker was unreachable is retried, and how long a `next`
   * message waits for the broker connection to be whole again, before the iteration gives up.
   * Default 60000 ms.
   */
  publishRetryMs?: number;
  /**
   * Requests waiting for a concurrency slot (across flows) beyond which a new one is refused at once with an
   * error response. Default DEFAULT_MAX_QUEUED (request-handler.ts).
   */
  maxQueued?: number;
  /**
   * Bytes of requests waiting for a concurrency slot (across flows) beyond which a new one is refused at once with
   * an error response. Default DEFAULT_MAX_QUEUED_BYTES (request-handler.ts).
   */
  maxQueuedBytes?: number;
  /** Per-save timeout of librarian documents. Default 120000 ms (TrustGraph's `--librarian-timeout`). */
  librarianTimeoutMs?: number;
  /** Librarian saves waiting for an answer at most; more are skipped. Default 64. */
  librarianMaxInFlight?: number;
  /**
   * Consumers on the flow's Shared request subscription. Default: as many as the transport needs to give the
   * subscription a REQUEST_WINDOW-message window (one where a consumer's queue is not capped).
   */
  requestConsumers?: number;
  /**
   * Publish each `next` request on the flow's `next` queue for any replica to take (TrustGraph's way). Default:
   * a `next` addressed to the flow's own request queue is handled by this replica without the broker, which
   * can drop a non-persistent message (a burst, a restart); while the flow stops, nexts go to the bus.
   */
  nextOnBus?: boolean;
  /**
   * The supervisor's aggregation topic (`{tenant}`, `{namespace}`, `{topic}` of the request topic filled in;
   * default DEFAULT_AGGREGATION_TOPIC) and how long a fan-out may wait for its subagents (default 300 s).
   */
  aggregation?: { topicTemplate?: string; timeoutMs?: number };
  /** The requests this replica runs or ended lately, shared by its flows (request-claims.ts answers from it); default one per flow. */
  recent?: RecentRequests;
  /** Asks the other replicas whether one took a request delivered again; absent: such a request runs. */
  claims?: RequestClaims;
}

/**
 * How a fan-in ended: `completed` (every subagent in, synthesis requested), `timed-out` (--aggregation-timeout
 * passed), `unclaimed` (a completion no fan-out waits for: its conversation got one error).
 */
export type AggregationOutcome = 'completed' | 'timed-out' | 'unclaimed' | 'cancelled' | 'failed';
