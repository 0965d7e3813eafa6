/**
 * bench:faults' count tells a conversation that ran twice (two agents ended it) from one whose final message
 * arrived twice (it ended once, and its final publish was sent again after the broker lost the acknowledgement).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Conversation } from '../../../bench/support/fault-gateway.js';
import { tally } from '../../../bench/support/fault-tally.js';

const audit = (requestId: string, iteration: number, outcome: string): string =>
  JSON.stringify({ msg: 'audit', component: 'audit', audit: 'agent-iteration', request_id: requestId, iteration, outcome, time: 1000 + iteration });

function logs(...files: string[][]): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'fault-tally-'));
  return files.map((lines, i) => {
    const file = join(dir, `agent-${i}.log`);
    writeFileSync(file, `${lines.join('\n')}\n`);
    return file;
  });
}

const ended = (id: string, finals: number): Conversation => ({ id, start: 0, end: 100, finals, answer: '42' });

describe('tally of duplicated final messages', () => {
  it('counts a conversation ended by two agents as duplicated, and one ended once with two final messages as resent', () => {
    const files = logs(
      [audit('twice', 1, 'next'), audit('twice', 2, 'answer'), audit('resent', 1, 'next'), audit('resent', 2, 'answer'), audit('once', 2, 'answer')],
      [audit('twice', 1, 'next'), audit('twice', 2, 'answer')],
    );
    const result = tally('broker-kill', 'native', [ended('twice', 2), ended('resent', 2), ended('once', 1)], { faultStart: 10, faultEnd: 50, heldUntil: 50 }, files);
    expect(result.duplicated).toBe(1);
    expect(result.finalResent).toBe(1);
    expect(result.answered).toBe(1);
    expect(result.started).toBe(3);
  });

  it('counts a conversation with two final messages and no audit line as resent, never as answered', () => {
    const result = tally('broker-kill', 'native', [ended('unaudited', 3)], { faultStart: 10, faultEnd: 50, heldUntil: 50 }, logs([]));
    expect(result).toMatchObject({ duplicated: 0, finalResent: 1, answered: 0 });
  });
});
