/**
 * Conversations kept going while a fault runs (test/support/cluster-serving.ts, topic-unload.test.ts): the
 * flow's model asks one MCP tool and answers with what it said, and a set of workers each keep one conversation
 * in flight until told to stop.
 */
import { expect } from 'vitest';
import { mcpTool } from '../../dev/flow-config.js';
import type { PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import type { GatewayClient } from './gateway-client.js';
import type { AgentHarnessOptions } from './harness/harness-types.js';

/** The harness options of a conversation of two iterations: `lookup` is asked for `q`; the answer is `answer`. */
export function lookupConversation(q: string): Pick<AgentHarnessOptions, 'script' | 'tools' | 'mcpTools'> & { answer: string } {
  const script = (terms: PromptTerms): string => {
    const history = terms.history as { observation: string }[];
    if (history.length === 0) return `Thought: look it up\nAction: lookup\nArgs: ${JSON.stringify({ q })}`;
    return `Thought: done\nFinal Answer: ${history[0]?.observation ?? ''}`;
  };
  return {
    script,
    tools: { lookup: mcpTool('lookup', 'lookup-mcp', [{ name: 'q', type: 'string', description: 'what' }]) },
    mcpTools: { 'lookup-mcp': (params) => `looked up: ${String((params as { q?: unknown }).q)}` },
    answer: `looked up: ${q}`,
  };
}

export interface InFlight {
  /** Every conversation the workers sent, in order. */
  readonly ids: string[];
  /** Lets each worker finish its conversation (or wait 30 s for it) and stop. */
  stop(): Promise<void>;
}

/** `count` workers, each sending a conversation once its last one ended (or waited 30 s); a send the broker refused is tried again. */
export function keepInFlight(gateway: GatewayClient, count: number): InFlight {
  const ids: string[] = [];
  let stopping = false;
  const workers = Array.from({ length: count }, async () => {
    while (!stopping) {
      const id = await gateway.send({ question: 'in flight' }).catch(() => undefined);
      if (id === undefined) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        continue;
      }
      ids.push(id);
      await gateway.waitEnded([id], 30_000).catch(() => undefined);
    }
  });
  return {
    ids,
    async stop() {
      stopping = true;
      await Promise.all(workers);
    },
  };
}

/** Sends `count` fresh conversations and checks that each is answered with `answer`, once. */
export async function freshAnswered(gateway: GatewayClient, count: number, answer: string): Promise<void> {
  const fresh = await Promise.all(Array.from({ length: count }, () => gateway.send({ question: 'fresh' })));
  await gateway.waitEnded(fresh, 60_000);
  for (const id of fresh) {
    expect(gateway.conversation(id).ends, `fresh conversation ${id}`).toBe(1);
    expect(gateway.last(id).error, `fresh conversation ${id}`).toBeFalsy();
    expect(gateway.last(id).content).toBe(answer);
  }
}
