/**
 * The hedge policies of the services the agent calls (src/bus/hedge-policy.ts): one per service, shared by its
 * clients in every flow, so that all the calls to a service teach it that service's latency. Each reports
 * under the service's name (`tg_agent_hedged_requests_total`, `tg_agent_hedge_deadline_seconds`). Only
 * services that only read get one: the flow's read-only services, and tool services configured `idempotent`
 * (labelled `tool-service:<config key>`).
 *
 *   --hedge-budget 0.1  --hedge-quantile 0.99  --hedge-factor 2  --hedge-floor 2  --hedge-ceiling 60
 */
import { DEFAULT_HEDGE, HedgePolicy, type HedgeOutcome, type HedgeSettings } from '../bus/index.js';

/** Where the policies report. */
export interface HedgeTelemetry {
  /** An overdue call to `service` ended so (or was not sent again: `over_budget`). */
  hedged(service: string, outcome: HedgeOutcome): void;
  /** The hedge deadline of `service` moved to `seconds`. */
  hedgeDeadline(service: string, seconds: number): void;
}

/** The hedging options as settings hold them; a budget of 0 turns hedging off. */
export interface HedgeOptions {
  readonly hedgeBudget?: number | undefined;
  readonly hedgeQuantile?: number | undefined;
  readonly hedgeFactor?: number | undefined;
  readonly hedgeFloorSeconds?: number | undefined;
  readonly hedgeCeilingSeconds?: number | undefined;
}

/** The settings of the policies, or undefined when hedging is off; absent options take the defaults. */
export function hedgeSettingsOf(options: HedgeOptions): HedgeSettings | undefined {
  const budget = options.hedgeBudget ?? DEFAULT_HEDGE.budget;
  if (budget === 0) return undefined;
  return {
    budget,
    quantile: options.hedgeQuantile ?? DEFAULT_HEDGE.quantile,
    factor: options.hedgeFactor ?? DEFAULT_HEDGE.factor,
    floorMs: options.hedgeFloorSeconds === undefined ? DEFAULT_HEDGE.floorMs : options.hedgeFloorSeconds * 1000,
    ceilingMs: options.hedgeCeilingSeconds === undefined ? DEFAULT_HEDGE.ceilingMs : options.hedgeCeilingSeconds * 1000,
  };
}

export class ServiceHedging {
  private readonly policies = new Map<string, HedgePolicy>();

  constructor(
    private readonly settings: HedgeSettings,
    private readonly telemetry: HedgeTelemetry,
  ) {}

  /**
   * The policy of `service`: TrustGraph's name, as in `--service-timeouts`, or `tool-service:<config key>` for a
   * tool service (each has its own latency).
   */
  policyFor(service: string): HedgePolicy {
    let policy = this.policies.get(service);
    if (!policy) {
      policy = new HedgePolicy(this.settings, {
        outcome: (outcome) => this.telemetry.hedged(service, outcome),
        deadline: (seconds) => this.telemetry.hedgeDeadline(service, seconds),
      });
      this.policies.set(service, policy);
      this.telemetry.hedgeDeadline(service, policy.deadlineMs / 1000);
    }
    return policy;
  }
}
