/**
 * A newcomer reads src/ a file and a function at a time: no file of 400 lines or more, no function (declaration,
 * method, arrow, constructor, accessor) over 80 lines, counted from its first line to its last. The agent
 * harness, which most tests start, is held to the same.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../../..');
const MAX_FILE_LINES = 399;
const MAX_FUNCTION_LINES = 80;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const FILES = sourceFiles(join(ROOT, 'src'));
const HARNESS_FILES = [join(ROOT, 'test/support/agent-harness.ts'), ...sourceFiles(join(ROOT, 'test/support/harness'))];

function longFunctions(path: string): string[] {
  const text = readFileSync(path, 'utf8');
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      const name = node.name?.getText(source) ?? '(anonymous)';
      if (lines > MAX_FUNCTION_LINES) found.push(`${relative(ROOT, path)}:${first + 1} ${name}: ${lines} lines`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the size of src/', () => {
  it('finds the source files', () => {
    expect(FILES.length).toBeGreaterThan(100);
  });

  it(`has no file over ${MAX_FILE_LINES} lines`, () => {
    const long = FILES.map((path) => [relative(ROOT, path), readFileSync(path, 'utf8').split('\n').length - 1] as const).filter(([, lines]) => lines > MAX_FILE_LINES);
    expect(long).toEqual([]);
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    expect(FILES.flatMap(longFunctions)).toEqual([]);
  });
});

describe('the size of the agent harness', () => {
  it('finds its files', () => {
    expect(HARNESS_FILES.length).toBeGreaterThan(4);
  });

  it(`has no file over ${MAX_FILE_LINES} lines and no function over ${MAX_FUNCTION_LINES} lines`, () => {
    expect(HARNESS_FILES.filter((path) => readFileSync(path, 'utf8').split('\n').length - 1 > MAX_FILE_LINES)).toEqual([]);
    expect(HARNESS_FILES.flatMap(longFunctions)).toEqual([]);
  });
});
