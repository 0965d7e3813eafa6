/**
 * How TrustGraph's services have been answering lately, per service: the outcomes of the calls of the last
 * `windowMs`, from the same events as the `tg_downstream_*` metrics. The group policy's load rules read it
 * (groups/availability.ts) to withdraw a group while a service it depends on is failing or slow.
 */

/** One service's recent calls, as a load rule judges them. */
export interface RecentLoad {
  readonly calls: number;
  /** Share of the calls that ended in an error or a timeout, 0..1. */
  readonly errorRate: number;
  /** Mean time to the reply (or to the timeout), in seconds. */
  readonly meanSeconds: number;
}

interface Outcome {
  readonly at: number;
  readonly seconds: number;
  readonly failed: boolean;
}

/** Outcomes judged per service at most: a busy service is judged on its latest calls. */
const MAX_KEPT = 1000;

export class DownstreamLoad {
  private readonly outcomes = new Map<string, Outcome[]>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A call to `service` (TrustGraph's name: `graph-rag`, `prompt`, `mcp-tool`, ...) ended. */
  record(service: string, seconds: number, failed: boolean): void {
    const list = this.outcomes.get(service) ?? [];
    list.push({ at: this.now(), seconds, failed });
    // Trimmed once it holds twice what is judged, not on every call: a splice per call moved 1 000 entries each time.
    if (list.length >= 2 * MAX_KEPT) list.splice(0, list.length - MAX_KEPT);
    this.outcomes.set(service, list);
  }

  /** The calls to `service` that ended within the last `windowMs`. */
  recent(service: string, windowMs: number): RecentLoad {
    const since = this.now() - windowMs;
    const list = (this.outcomes.get(service) ?? []).slice(-MAX_KEPT).filter((o) => o.at >= since);
    if (list.length === 0) return { calls: 0, errorRate: 0, meanSeconds: 0 };
    const failed = list.filter((o) => o.failed).length;
    return { calls: list.length, errorRate: failed / list.length, meanSeconds: list.reduce((sum, o) => sum + o.seconds, 0) / list.length };
  }
}

/** TrustGraph's service name of a downstream target (`graph-rag-request` → `graph-rag`). */
export function serviceOfTarget(target: string): string {
  return target.endsWith('-request') ? target.slice(0, -'-request'.length) : target;
}
