/**
 * Writes `schemas/*.schema.json` from the zod schemas in `src/tools` (`npm run schemas`).
 * With `--check`, writes nothing and exits 1 when a file is missing or out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateJsonSchemas } from '../src/tools/config/json-schemas.js';

export { generateJsonSchemas } from '../src/tools/config/json-schemas.js';

/** The repository's `schemas/` directory. */
export const SCHEMAS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'schemas');

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function main(check: boolean): number {
  let stale = 0;
  for (const [file, text] of Object.entries(generateJsonSchemas())) {
    const path = join(SCHEMAS_DIR, file);
    const current = readOrNull(path);
    if (current === text) {
      console.log(`schemas/${file}: up to date`);
    } else if (check) {
      console.error(`schemas/${file}: out of date; run \`npm run schemas\``);
      stale++;
    } else {
      writeFileSync(path, text);
      console.log(`schemas/${file}: written`);
    }
  }
  return stale === 0 ? 0 : 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = main(process.argv.includes('--check'));
}
