import { describe, expect, it } from 'vitest';
import { errorKind } from '../../../bench/support/growth-conversations.js';

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
