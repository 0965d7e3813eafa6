/**
 * A fresh agent harness for each test, stopped after it: `const start = harnessPerTest(target)` in a describe (or
 * at the top of a file), then `const h = await start({ tools, script })` inside a test.
 */
import { afterEach } from 'vitest';
import { startAgentHarness, type AgentHarness, type AgentHarnessOptions } from './agent-harness.js';

/** Where a behaviour suite runs: the harness transport, and the broker's URL when it needs one. */
export type HarnessTarget = Pick<AgentHarnessOptions, 'transport' | 'webSocketUrl' | 'rabbitmqUrl' | 'kafkaBootstrapServers'>;

export function harnessPerTest(
  target: HarnessTarget,
  defaults: Partial<AgentHarnessOptions> = {},
): (options?: Partial<AgentHarnessOptions>) => Promise<AgentHarness> {
  const started: AgentHarness[] = [];
  afterEach(async () => {
    await Promise.allSettled(started.splice(0).map((h) => h.stop()));
  });
  return async (options = {}) => {
    const harness = await startAgentHarness({ ...target, ...defaults, ...options });
    started.push(harness);
    return harness;
  };
}

/** A suite's name with the transport it runs on, e.g. `malformed input [memory]`. */
export function onTarget(name: string, target: HarnessTarget): string {
  return `${name} [${target.transport ?? 'websocket'}]`;
}
