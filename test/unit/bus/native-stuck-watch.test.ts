/** StuckWatch: which native producers and consumers the transport replaces for not coming back. */
import { describe, expect, it } from 'vitest';
import { StuckWatch, type Watched } from '../../../src/bus/pulsar/native/stuck-watch.js';

const handler = (name: string): Watched => ({ name, replace: () => undefined });

describe('StuckWatch', () => {
  const a = handler('consumer of a as s');
  const b = handler('producer for b');

  it('replaces one down for stuckMs once another has been up for othersUpMs, and again only stuckMs later', () => {
    const watch = new StuckWatch({ stuckMs: 15_000, othersUpMs: 8_000 });
    // Both down from 0 (the broker is gone); b is back at 11 s, a never.
    expect(watch.sample([[a, false], [b, false]], 0)).toEqual([]);
    expect(watch.sample([[a, false], [b, true]], 11_000)).toEqual([]);
    expect(watch.sample([[a, false], [b, true]], 15_000)).toEqual([]);
    expect(watch.sample([[a, false], [b, true]], 18_999)).toEqual([]);
    expect(watch.sample([[a, false], [b, true]], 19_000)).toEqual([a]);
    expect(watch.sample([[a, false], [b, true]], 20_000)).toEqual([]);
    expect(watch.sample([[a, false], [b, true]], 34_000)).toEqual([a]);
  });

  it('replaces nothing while no handler is up: the broker is away, and the client reconnects by itself', () => {
    const watch = new StuckWatch({ stuckMs: 15_000, othersUpMs: 8_000 });
    for (let t = 0; t <= 120_000; t += 1000) expect(watch.sample([[a, false], [b, false]], t)).toEqual([]);
  });

  it('forgets a handler that came back, or that was closed', () => {
    const watch = new StuckWatch({ stuckMs: 15_000, othersUpMs: 8_000 });
    watch.sample([[a, false], [b, true]], 0);
    watch.sample([[a, true], [b, true]], 10_000);
    // Down again at 12 s: its 15 s count from there.
    watch.sample([[a, false], [b, true]], 12_000);
    expect(watch.sample([[a, false], [b, true]], 26_999)).toEqual([]);
    expect(watch.sample([[a, false], [b, true]], 27_000)).toEqual([a]);

    watch.sample([[b, true]], 28_000);
    // a, subscribed again under the same object, starts a new count.
    expect(watch.sample([[a, false], [b, true]], 30_000)).toEqual([]);
    expect(watch.sample([[a, false], [b, true]], 45_000)).toEqual([a]);
  });
});
