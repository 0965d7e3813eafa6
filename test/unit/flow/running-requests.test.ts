import { describe, expect, it } from 'vitest';
import { RunningRequests } from '../../../src/flow/running-requests.js';

describe('the requests a flow is running', () => {
  it('knows a request by its id and its bytes, until it ends', () => {
    const running = new RunningRequests();
    const first = Buffer.from('{"question":"a"}');
    const next = Buffer.from('{"question":"a","history":[1]}');
    running.add('c1', first);
    running.add('c1', next);
    expect(running.has('c1', Buffer.from('{"question":"a"}'))).toBe(true);
    expect(running.has('c1', Buffer.from('{"question":"b"}'))).toBe(false);
    expect(running.has('c2', first)).toBe(false);
    running.delete('c1', first);
    expect(running.has('c1', first)).toBe(false);
    expect(running.has('c1', next)).toBe(true);
    running.delete('c1', next);
    expect(running.has('c1', next)).toBe(false);
  });
});
