/** A chart's subtitle: the day, the commit and the command that measured it, as the documents quote figures. */
import { execFileSync } from 'node:child_process';

export function runNote(command: string, extra?: string): string {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    // Not a git checkout: the note says so.
  }
  return `${new Date().toISOString().slice(0, 10)}, commit ${commit}, ${command}${extra ? `; ${extra}` : ''}`;
}
