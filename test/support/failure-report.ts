/**
 * What a failing integration test prints about itself, so that a failure seen once (on a loaded CI machine)
 * explains itself: the agent's log lines, each transport's status history, and whatever the test adds (the
 * stand-ins' view, the gateway's conversations). `explained(body, report)` runs the body and, when it throws,
 * appends the report to the error's message; with TG_TEST_REPORT=always it prints the report of a pass too.
 */
import type { Transport, TransportStatus } from '../../src/bus/transport.js';
import type { LogCapture } from './log-capture.js';

const started = Date.now();

/** Milliseconds since this module loaded, as every line of a report is stamped. */
export function elapsed(at = Date.now()): string {
  return `+${((at - started) / 1000).toFixed(1)}s`;
}

export interface StatusHistory {
  /** One line per change of `connected` or `epoch`, stamped. */
  readonly lines: string[];
  stop(): void;
}

/** Records every status change the transport pushes, from now on. */
export function recordStatus(transport: Transport, name: string): StatusHistory {
  const lines: string[] = [];
  const record = (status: TransportStatus): void => {
    lines.push(`${elapsed()} ${name}: ${status.connected ? 'connected' : 'down'} epoch ${status.epoch}${status.detail ? ` (${status.detail})` : ''}`);
  };
  record(transport.status());
  const stop = transport.onStatus(record);
  return { lines, stop };
}

/**
 * Log lines at warn or above, or naming one of `ids` anywhere in the line, stamped by their `time`: the
 * service's own (`from: 'service'`) or the native client's (`from: 'pulsar-client'`, whose lookups repeat).
 */
export function logLines(capture: LogCapture, ids: readonly string[] = [], limit = 200, from: 'service' | 'pulsar-client' = 'service'): string[] {
  const picked = capture.lines.filter((line) => {
    if ((line.component === 'pulsar-client') !== (from === 'pulsar-client')) return false;
    if (typeof line.level === 'number' && line.level >= 40) return true;
    if (ids.length === 0) return false;
    const text = JSON.stringify(line);
    return ids.some((id) => text.includes(id));
  });
  const shown = picked.slice(-limit).map((line) => {
    const { time, level, msg, pid: _pid, hostname: _host, ...rest } = line;
    return `${typeof time === 'number' ? elapsed(time) : ''} [${String(level)}] ${String(msg)} ${JSON.stringify(rest)}`;
  });
  return picked.length > limit ? [`(${picked.length - limit} earlier lines left out)`, ...shown] : shown;
}

/** Runs `body`; when it throws, the error's message gets `report()`'s sections appended (report failures too). */
export async function explained<T>(body: () => Promise<T>, report: () => Record<string, readonly string[]>): Promise<T> {
  const render = (): string => {
    try {
      return Object.entries(report())
        .map(([title, lines]) => `--- ${title} (${lines.length})\n${lines.join('\n')}`)
        .join('\n');
    } catch (reportError) {
      return `(the failure report itself failed: ${String(reportError)})`;
    }
  };
  try {
    const result = await body();
    // To see the timings of a run that passed (e.g. how long reconnecting took on a loaded machine).
    if (process.env.TG_TEST_REPORT === 'always') console.error(`report of a passing run:\n${render()}`);
    return result;
  } catch (error) {
    const text = render();
    if (error instanceof Error) {
      error.message = `${error.message}\n\nat ${elapsed()}; failure report:\n${text}`;
      throw error;
    }
    throw new Error(`${String(error)}\n\nfailure report:\n${text}`, { cause: error });
  }
}
