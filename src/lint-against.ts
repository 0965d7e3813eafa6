/**
 * `tg-agent lint --against <audit log or directory>`: the recorded iterations of the audit logs (the agent's
 * log lines, or the audit topic's payloads; `.gz` files too; a directory's files, recursively) replayed
 * through the configuration being linted (workflow/config-impact.ts), and the report in words.
 */
import { createReadStream, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { AuditLogError } from './config/index.js';
import { errorMessage, quote, quoteList } from './errors/index.js';
import { type ConfigImpact, type Loss, type RecordedIteration, recordedIteration } from './workflow/index.js';

/** The files under `path` (itself when a file), in name order. */
function auditFiles(path: string): string[] {
  let stats;
  try {
    stats = statSync(path);
  } catch (error) {
    throw new AuditLogError(`cannot read the audit log ${quote(path)}: ${errorMessage(error)}`, { cause: error });
  }
  if (!stats.isDirectory()) return [path];
  return readdirSync(path, { recursive: true, encoding: 'utf8' })
    .map((name) => join(path, name))
    .filter((file) => statSync(file).isFile())
    .sort();
}

export interface AuditRead {
  readonly records: RecordedIteration[];
  readonly files: number;
  /** Lines that were not an audit record of an iteration (other log lines, blank lines, JSON that is not one). */
  readonly otherLines: number;
}

/** Every recorded iteration in the audit logs at `path`, read line by line. */
export async function readAuditLogs(path: string): Promise<AuditRead> {
  const files = auditFiles(path);
  const records: RecordedIteration[] = [];
  let otherLines = 0;
  for (const file of files) {
    const raw = createReadStream(file);
    const input = file.endsWith('.gz') ? raw.pipe(createGunzip()) : raw;
    try {
      for await (const line of createInterface({ input, crlfDelay: Infinity })) {
        const record = line.startsWith('{') ? recordedIteration(parsed(line)) : undefined;
        if (record === undefined) otherLines++;
        else records.push(record);
      }
    } catch (error) {
      throw new AuditLogError(`cannot read the audit log ${quote(file)}: ${errorMessage(error)}`, { cause: error });
    }
  }
  return { records, files: files.length, otherLines };
}

function parsed(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

const share = (part: number, whole: number): string => (whole === 0 ? '' : ` (${Math.round((100 * part) / whole)} %)`);
const used = (loss: Loss, what: string): string => (loss.losingUsed > 0 ? `, ${loss.losingUsed} of which used ${what}` : '');

/** The impact in words: what would be taken away, then the dead ends; one line when nothing would change. */
export function formatImpact(impact: ConfigImpact, read: Pick<AuditRead, 'files'>): string {
  const lines = [
    `impact on workspace ${impact.workspace}: ${impact.iterations} recorded iteration(s) of ${impact.conversations} conversation(s), from ${read.files} file(s)`,
  ];
  const losing = impact.tools.filter((t) => t.losing > 0);
  for (const tool of losing) {
    lines.push(`  tool ${quote(tool.tool)}: no longer offered to ${tool.losing} of the ${tool.iterations} iterations offered it${share(tool.losing, tool.iterations)}${used(tool, 'it')}`);
    for (const group of tool.byGroup.filter((g) => g.losing > 0)) {
      lines.push(`    group ${quote(group.group)}: ${group.losing} of ${group.iterations}${share(group.losing, group.iterations)}${used(group, 'it')}`);
    }
  }
  for (const group of impact.groups.filter((g) => g.losing > 0)) {
    lines.push(`  group ${quote(group.group)}: ${group.losing} of its ${group.iterations} iterations lose a tool they were offered${share(group.losing, group.iterations)}${used(group, 'one they lose')}`);
  }
  for (const dead of impact.deadEnds) {
    lines.push(
      `  state ${quote(dead.state)} becomes a dead end (no tool offered) for ${dead.conversations} conversation(s) that reached it ` +
        `(${dead.iterations} iteration(s), groups ${quoteList(dead.groups)})`,
    );
  }
  if (lines.length === 1) lines.push('  no recorded iteration would lose a tool it was offered');
  return lines.join('\n');
}
