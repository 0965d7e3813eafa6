/** The app's log lines (JSON) kept in memory, so tests can read audit records and check what was logged. */
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

export interface LogCapture {
  readonly logger: Logger;
  /** Every line written, parsed, in arrival order. */
  readonly lines: Record<string, unknown>[];
  /**
   * The audit records (`audit: agent-iteration`), sorted by iteration: the iterations of one conversation run on
   * different slots, so their lines may be written in any order.
   */
  audits(): Record<string, unknown>[];
  /** The audit records of one request id, in arrival order. */
  auditsOf(id: string): Record<string, unknown>[];
}

export function capturingLogger(level: 'debug' | 'info' = 'info'): LogCapture {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  const isAudit = (line: Record<string, unknown>): boolean => line.audit === 'agent-iteration';
  return {
    logger: pino({ level }, stream),
    lines,
    audits: () => lines.filter(isAudit).sort((a, b) => (a.iteration as number) - (b.iteration as number)),
    auditsOf: (id: string) => lines.filter((line) => isAudit(line) && line.request_id === id),
  };
}

/** The last `limit` lines a logger wrote, parsed: enough to explain a failure without keeping a long test's log. */
export function recentLines(level: 'debug' | 'info' = 'info', limit = 500): Pick<LogCapture, 'logger' | 'lines'> {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      if (lines.length > limit) lines.splice(0, lines.length - limit);
      callback();
    },
  });
  return { logger: pino({ level }, stream), lines };
}
