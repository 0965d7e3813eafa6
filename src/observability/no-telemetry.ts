/**
 * Telemetry that records nothing: for tests and tools that run the agent's parts without metrics or an audit
 * trail. Every emitter takes a whole telemetry object, so none checks whether a method exists; this is what
 * they get when nothing should be recorded.
 */
import type { RequestTelemetry } from '../flow/index.js';
import type { Telemetry } from './telemetry.js';

const nothing = (): void => {};

export const noRequestTelemetry: RequestTelemetry = {
  toolsOffered: nothing,
  llmFinished: nothing,
  actionDenied: nothing,
  argumentsInvalid: nothing,
  argumentsUndeclared: nothing,
  toolFinished: nothing,
  stateTransition: nothing,
  sessionEnded: nothing,
  sessionNamed: nothing,
  patternChosen: nothing,
  planCreated: nothing,
  planStepRefused: nothing,
  subagentsFannedOut: nothing,
  stateUnknown: nothing,
  groupsWithdrawn: nothing,
  toolsWithdrawn: nothing,
  groupsFellBack: nothing,
  groupsUnknown: nothing,
  refused: nothing,
  failed: nothing,
  done: nothing,
};

export const noTelemetry: Telemetry = {
  request: () => noRequestTelemetry,
  next: nothing,
  overloaded: nothing,
  consumed: nothing,
  subscribing: nothing,
  produced: nothing,
  downstream: nothing,
  hedged: nothing,
  hedgeDeadline: nothing,
  documentSaved: nothing,
  aggregationEnded: nothing,
  aggregationRefused: nothing,
  registryRebuilt: nothing,
  configVersion: nothing,
  configFailed: nothing,
  workspaceDeleted: nothing,
  policyRead: nothing,
  discoveryFailed: nothing,
  discoveryStatus: nothing,
  brokerDropRate: nothing,
  ledgerRecordRefused: nothing,
};
