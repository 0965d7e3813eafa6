/**
 * One native producer's or consumer's connection as a publish sees it (connection-status.ts, `PublishLink`): up
 * or not, and since when it is back after it was last seen down. The binding has no connection events, so it is
 * what `isConnected()` answered when last asked, by the transport's status sample (every 250 ms) or by a
 * publish waiting for it.
 */
import type { PublishLink } from '../../connection-status.js';

export class LinkState implements PublishLink {
  private downSeen = false;
  private backAt = -Infinity;

  constructor(
    readonly name: string,
    private readonly isConnected: () => boolean,
  ) {}

  up(): boolean {
    const connected = this.isConnected();
    if (!connected) this.downSeen = true;
    else if (this.downSeen) {
      this.downSeen = false;
      this.backAt = performance.now();
    }
    return connected;
  }

  restoredAt(): number {
    return this.backAt;
  }
}
