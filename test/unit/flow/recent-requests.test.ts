import { describe, expect, it } from 'vitest';
import { RecentRequests } from '../../../src/flow/recent-requests.js';

describe('the requests a flow runs or ran lately', () => {
  it('knows a request by its id and its bytes while it runs and for a minute after it ends', () => {
    let now = 0;
    const recent = new RecentRequests(() => now);
    const first = RecentRequests.keyOf('c1', Buffer.from('{"question":"a"}'));
    const next = RecentRequests.keyOf('c1', Buffer.from('{"question":"a","history":[1]}'));
    recent.begin(first);
    expect(recent.has(RecentRequests.keyOf('c1', Buffer.from('{"question":"a"}')))).toBe(true);
    expect(recent.has(next)).toBe(false);
    expect(recent.has(RecentRequests.keyOf('c2', Buffer.from('{"question":"a"}')))).toBe(false);
    now = 5000;
    recent.end(first, true);
    now = 64_000;
    expect(recent.has(first), 'ended 59 s ago').toBe(true);
    now = 65_001;
    expect(recent.has(first), 'ended over a minute ago').toBe(false);
  });

  it('forgets at once a request given back to the broker, whose next delivery is meant to run', () => {
    const recent = new RecentRequests(() => 0);
    const key = RecentRequests.keyOf('c1', Buffer.from('{"question":"a"}'));
    recent.begin(key);
    recent.end(key, false);
    expect(recent.has(key)).toBe(false);
  });
});
