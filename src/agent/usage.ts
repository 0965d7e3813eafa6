/**
 * Token usage of one consumed request: every prompt call the iteration makes (meta-router, ReAct, plan,
 * step, synthesis) adds its `in_token` / `out_token`; the last `model` wins. The dialog's final message carries
 * the sums, as TrustGraph's orchestrator writes them (absent when no call reported any).
 */
import type { AgentResponse, PromptResponse } from '../wire/index.js';

export class UsageTracker {
  private totalIn = 0;
  private totalOut = 0;
  private lastModel: string | null = null;

  track(response: Pick<PromptResponse, 'in_token' | 'out_token' | 'model'>): void {
    if (response.in_token !== null && response.in_token !== undefined) this.totalIn += response.in_token;
    if (response.out_token !== null && response.out_token !== undefined) this.totalOut += response.out_token;
    if (response.model !== null && response.model !== undefined) this.lastModel = response.model;
  }

  /** The fields of the final AgentResponse: zero sums are left out (null), as in TrustGraph. */
  fields(): Pick<AgentResponse, 'in_token' | 'out_token' | 'model'> {
    return {
      in_token: this.totalIn > 0 ? this.totalIn : null,
      out_token: this.totalOut > 0 ? this.totalOut : null,
      model: this.lastModel,
    };
  }
}
