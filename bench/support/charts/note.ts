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

/** A benchmark's flags as a note quotes them: those that shaped the figures, not where they were written. */
export function shownFlags(argv: readonly string[] = process.argv.slice(2), outputs: readonly string[] = ['--json', '--chart', '--charts']): string {
  return argv.filter((arg, i) => !outputs.includes(arg) && !outputs.includes(argv[i - 1] ?? '') && !outputs.some((flag) => arg.startsWith(`${flag}=`))).join(' ');
}
