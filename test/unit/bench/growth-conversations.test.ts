import { describe, expect, it } from 'vitest';
import { errorKind, perIteration } from '../../../bench/support/growth-conversations.js';

describe('errorKind', () => {
  it('counts the errors of one kind together, whatever their request id and workspace', () => {
    const text = (id: string, workspace: string): string =>
      `agent-error: no response to request ${id} on non-persistent://tg/request/prompt-rag:${workspace}:default within 30000 ms`;
    const a = errorKind(text('5b54aee6-237c-4c37-bb7f-4667ffe07e41', 'bench-mxcsht2q-fbfde62e'));
    const b = errorKind(text('93e2aba0-86f5-4f2b-971c-21ade5900e14', 'bench-k2a9x0qq-01ab23cd'));
    expect(a).toBe(b);
    expect(a).toBe('agent-error: no response to request <id> on non-persistent://tg/request/prompt-rag:<workspace>:default within 30000 ms');
  });

  it('keeps errors of different kinds apart, and names a missing text', () => {
    expect(errorKind('timeout')).not.toBe(errorKind('wrong answer'));
    expect(errorKind(undefined)).toBe('unknown');
  });
});

describe('perIteration', () => {
  it("divides the agent's CPU by the iterations it counted itself in the window", () => {
    // 12 s of CPU over 8 000 iterations finished in a 10 s window, whatever number of conversations ended in it.
    const figures = perIteration({ windowSeconds: 10, iterations: 8_000, cpuSeconds: 12, eventLoopCpuSeconds: 9 });
    expect(figures.iterationsPerSecond).toBe(800);
    expect(figures.cpuMsPerIteration).toBeCloseTo(1.5);
    expect(figures.eventLoopMsPerIteration).toBeCloseTo(1.125);
  });

  it('names no figure for a window in which the agent finished nothing', () => {
    const figures = perIteration({ windowSeconds: 10, iterations: 0, cpuSeconds: 10, eventLoopCpuSeconds: 10 });
    expect(figures.iterationsPerSecond).toBe(0);
    expect(figures.cpuMsPerIteration).toBeNaN();
  });
});
