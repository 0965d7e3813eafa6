/**
 * The shape of src/, beside its size (code-size.test.ts): the one-way rule between folders, kept as data in
 * .dependency-cruiser.cjs and checked here with dependency-cruiser (layers as docs/design.md draws them, no
 * import running up, no circle of files or folders, other folders through their index.ts, backends and
 * patterns apart); the one way errors are raised (coded, each listed in docs/errors.md); and that the documents,
 * "where to change what" among them, name only files that exist.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { cruise, type ICruiseResult, type IForbiddenRuleType } from 'dependency-cruiser';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../../..');
const config = createRequire(import.meta.url)('../../../.dependency-cruiser.cjs') as { forbidden: IForbiddenRuleType[]; LAYERS: string[] };

/** Each rule dependency-cruiser finds broken in `baseDir`'s src/, as `rule: from → to`. */
async function violations(baseDir: string): Promise<string[]> {
  const { output } = await cruise(
    ['src'],
    { baseDir, validate: true, ruleSet: { forbidden: config.forbidden }, includeOnly: '^src/', tsPreCompilationDeps: true },
    {},
    { tsConfig: extractTSConfig(join(ROOT, 'tsconfig.json')) },
  );
  return (output as ICruiseResult).summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
}

describe('the one-way rule of src/', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'tg-agent-structure-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  // Each cruise parses all of src/ with TypeScript: over 30 s under load 30–40 on 2 cores; the timeouts only catch a hang.
  it('holds: no upward import, no circle, other folders through their index', async () => {
    expect(await violations(ROOT)).toEqual([]);
  }, 180_000);

  it('fails on an upward import, a circle of files and a deep import into another folder', async () => {
    cpSync(join(ROOT, 'src'), join(scratch, 'src'), { recursive: true });
    writeFileSync(join(scratch, 'src/errors/upward.ts'), "import type { Finding } from '../workflow/index.js';\nexport type Upward = Finding;\n");
    writeFileSync(join(scratch, 'src/retry/ring-a.ts'), "import { b } from './ring-b.js';\nexport const a = (): unknown => b;\n");
    writeFileSync(join(scratch, 'src/retry/ring-b.ts'), "import { a } from './ring-a.js';\nexport const b = (): unknown => a;\n");
    writeFileSync(join(scratch, 'src/config/deep.ts'), "import { TransportError } from '../bus/errors.js';\nexport const deep = TransportError;\n");
    const found = await violations(scratch);
    expect(found).toContain('layer-errors: src/errors/upward.ts → src/workflow/index.ts');
    expect(found).toContain('no-circular: src/retry/ring-a.ts → src/retry/ring-b.ts');
    expect(found).toContain('through-the-index: src/config/deep.ts → src/bus/errors.ts');
  }, 180_000);

  it('orders the folders as docs/design.md draws them, every folder of src/ in it', () => {
    const design = readFileSync(join(ROOT, 'docs/design.md'), 'utf8');
    const drawing = /### The layers\n[\s\S]*?```\n([\s\S]*?)```/.exec(design)?.[1];
    expect(drawing, 'docs/design.md has a "### The layers" drawing').toBeDefined();
    // Top first in the drawing; the line of the root files has no folder name of its own.
    const drawn = drawing!
      .split('\n')
      .map((line) => /^src\/([a-z-]+)\//.exec(line.trim())?.[1])
      .filter((name): name is string => name !== undefined);
    expect(drawn.reverse()).toEqual(config.LAYERS);
    const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    expect([...folders].sort()).toEqual([...config.LAYERS].sort());
  });
});

describe('the documents', () => {
  it('name only files and folders of this repository that exist', () => {
    const documents = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
    const named = documents.flatMap((document) =>
      [...readFileSync(join(ROOT, document), 'utf8').matchAll(/`((?:src|test|dev|bench|scripts|deploy)\/[^`<>*{}\s]+)`/g)].map((m) => ({
        document,
        path: m[1]!.replace(/[:,.;)]+$/, ''),
      })),
    );
    expect(named.length).toBeGreaterThan(100);
    expect(named.filter(({ path }) => !existsSync(join(ROOT, path))).map(({ document, path }) => `${document}: ${path}`)).toEqual([]);
  });
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** JavaScript's own error classes: raising one of these in src/ is raising an uncoded error. */
const BUILT_IN_ERRORS = new Set(['Error', 'TypeError', 'RangeError', 'SyntaxError', 'ReferenceError', 'EvalError', 'URIError', 'AggregateError']);

/** `new Error(…)`, `Error(…)` and `extends Error` (or another built-in error class) in a file, as `file:line`. */
function bareErrors(path: string): string[] {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node): string => `${relative(ROOT, path)}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;
  const visit = (node: ts.Node): void => {
    if ((ts.isNewExpression(node) || ts.isCallExpression(node)) && ts.isIdentifier(node.expression) && BUILT_IN_ERRORS.has(node.expression.text)) found.push(at(node));
    if (ts.isHeritageClause(node) && node.types.some((type) => BUILT_IN_ERRORS.has(type.expression.getText(source)))) found.push(at(node));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the errors src/ raises', () => {
  const files = sourceFiles(join(ROOT, 'src'));
  const base = join(ROOT, 'src/errors/coded-error.ts');

  it('are coded: no bare Error (nor TypeError, RangeError, …) but the base CodedError extends', () => {
    expect(files.filter((path) => path !== base).flatMap(bareErrors)).toEqual([]);
    expect(bareErrors(base)).toHaveLength(1);
  });

  it('are each listed in docs/errors.md with their class', () => {
    const table = readFileSync(join(ROOT, 'docs/errors.md'), 'utf8');
    const coded = files.flatMap((path) =>
      [...readFileSync(path, 'utf8').matchAll(/class (\w+) extends [\w.]+ \{[^}]*?readonly code(?:: string)? = '(TG_[A-Z_]+)'/g)].map((m) => `${m[2]} ${m[1]}`),
    );
    expect(coded.length).toBeGreaterThan(25);
    const listed = [...table.matchAll(/^\| `(TG_[A-Z_]+)` \| `(\w+)` \|/gm)].map((m) => `${m[1]} ${m[2]}`);
    expect([...listed].sort()).toEqual([...coded].sort());
  });
});
