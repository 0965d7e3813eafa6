/**
 * bench:faults' count of what every conversation got (bench/faults.ts describes the classes): from the gateway's
 * record of each conversation and the agents' audit lines.
 */
import { readFileSync } from 'node:fs';
import type { Conversation } from './fault-gateway.js';
import type { BenchTransportKind } from './transport.js';

export interface FaultResult {
  fault: string;
  transport: BenchTransportKind;
  /** How long the fault itself took (for a broker outage: from the kill until the broker answered again). */
  faultSeconds: number;
  started: number;
  unsent: number;
  answered: number;
  errors: number;
  /** More than one final message, and the agents' audit lines show the conversation ended more than once (it ran twice). */
  duplicated: number;
  /**
   * More than one final message of a conversation that ended once: a final message whose publish the broker
   * connection lost before acknowledging it, sent again (the response topic's at-least-once during a broker fault;
   * TrustGraph's gateway stops at the first `end_of_dialog`). Nothing ran twice.
   */
  finalResent: number;
  lost: { agentEnded: number; midway: number; neverSeen: number };
  /**
   * Of `lost.agentEnded`: the conversations whose last iteration was audited before the broker was back (other
   * faults: before the fault began). The broker had acknowledged their final message and held it when it went
   * away: no publish is acknowledged while it is away, and the audit line follows the acknowledgement.
   */
  agentEndedHeldByBroker: number;
  /**
   * Of every lost conversation: those in flight while the fault ran (started before its end) of a fault whose design
   * may lose what is in flight (`lossReason`), e.g. a non-persistent topic moving to another broker.
   */
  lostByDesign: number;
  lossReason: string | undefined;
  /** Of the conversations started before the fault's end: the longest wait from the fault's end to a final message. */
  longestAfterFaultMs: number;
  /** Conversations started before the fault's end that got no final message within 30 s of it (lost ones included). */
  over30s: number;
  /** From the fault's end until the first conversation started after it was answered; NaN: none was. */
  freshAnsweredAfterMs: number;
  errorSamples: string[];
  /** The first lost conversations' ids, to look up in the agents' logs (--keep-logs). */
  lostIds: string[];
}

/** Every conversation counted once; see the header for the classes. */
export function tally(
  fault: string,
  transport: BenchTransportKind,
  conversations: readonly Conversation[],
  window: { faultStart: number; faultEnd: number; heldUntil: number },
  logFiles: readonly string[],
  lossReason?: string,
): FaultResult {
  const audits = auditedOutcomes(logFiles);
  const result: FaultResult = {
    fault,
    transport,
    faultSeconds: (window.faultEnd - window.faultStart) / 1000,
    started: 0,
    unsent: 0,
    answered: 0,
    errors: 0,
    duplicated: 0,
    finalResent: 0,
    lost: { agentEnded: 0, midway: 0, neverSeen: 0 },
    agentEndedHeldByBroker: 0,
    lostByDesign: 0,
    lossReason,
    longestAfterFaultMs: 0,
    over30s: 0,
    freshAnsweredAfterMs: Number.NaN,
    errorSamples: [],
    lostIds: [],
  };
  for (const c of conversations) {
    if (c.unsent !== undefined) {
      result.unsent++;
      continue;
    }
    result.started++;
    const before = c.start < window.faultEnd;
    if (before && (c.end === undefined || c.end - window.faultEnd > 30_000)) result.over30s++;
    if (c.end === undefined) {
      if (result.lostIds.length < 5) result.lostIds.push(c.id);
      if (lossReason !== undefined && before) result.lostByDesign++;
      const { outcomes, lastAt } = audits.get(c.id) ?? { outcomes: [], lastAt: 0 };
      if (outcomes.some(isFinal)) {
        result.lost.agentEnded++;
        if (lastAt <= window.heldUntil) result.agentEndedHeldByBroker++;
      } else if (outcomes.length > 0) result.lost.midway++;
      else result.lost.neverSeen++;
      continue;
    }
    if (before) result.longestAfterFaultMs = Math.max(result.longestAfterFaultMs, c.end - window.faultEnd);
    if (c.finals > 1) {
      const ends = (audits.get(c.id)?.outcomes ?? []).filter(isFinal).length;
      if (ends > 1) result.duplicated++;
      else result.finalResent++;
    }
    else if (c.error !== undefined || c.answer !== '42') {
      result.errors++;
      const sample = (c.error ?? `answer "${c.answer}"`).slice(0, 140);
      if (result.errorSamples.length < 3 && !result.errorSamples.includes(sample)) result.errorSamples.push(sample);
    } else {
      result.answered++;
      if (!before) result.freshAnsweredAfterMs = Math.min(Number.isNaN(result.freshAnsweredAfterMs) ? Infinity : result.freshAnsweredAfterMs, c.end - window.faultEnd);
    }
  }
  return result;
}

/** An audited outcome that ends the conversation with a final message. */
function isFinal(outcome: string): boolean {
  return outcome === 'answer' || outcome === 'error' || outcome === 'refused';
}

/** request id → the outcomes of its audited iterations and when the last was logged (epoch ms), from the agents' JSON logs. */
function auditedOutcomes(logFiles: readonly string[]): Map<string, { outcomes: string[]; lastAt: number }> {
  const audited = new Map<string, { outcomes: string[]; lastAt: number }>();
  for (const file of logFiles) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      if (!line.includes('"agent-iteration"')) continue;
      try {
        const record = JSON.parse(line) as { request_id?: string; outcome?: string; time?: number };
        if (!record.request_id || !record.outcome) continue;
        const seen = audited.get(record.request_id) ?? { outcomes: [], lastAt: 0 };
        seen.outcomes.push(record.outcome);
        seen.lastAt = Math.max(seen.lastAt, record.time ?? 0);
        audited.set(record.request_id, seen);
      } catch {
        // a line cut by a SIGKILL
      }
    }
  }
  return audited;
}

