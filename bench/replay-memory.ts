/**
 * What the replay memory (`--replay-memory`, src/security/seen-signatures.ts) costs: the heap each remembered
 * signature takes, and the time to check and remember one, at 100 000 and 1 000 000 signatures.
 *
 *   npm run bench:replay-memory
 *
 * Takes about 1 min; no broker, no load wait.
 *
 * Needs: nothing but this checkout (it runs itself again with the garbage collector exposed, to measure the heap).
 *
 * Genuine signatures (HMAC-SHA256, base64url, as `next` messages carry them) are made first, then handed to a
 * memory of exactly that capacity within one age limit, as a fleet's accepted `next`s arrive: the heap after a
 * collection, before and after, divided by the count; and the time per `remember` (the digest included).
 *
 * Flags: --sizes 100000,1000000  --json <file>
 */
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { SeenSignatures } from '../src/security/seen-signatures.js';
import { benchFlags } from './support/options.js';
import { log, writeJson } from './support/run.js';
import { table } from './support/stats.js';

const flags = benchFlags(import.meta.url);
const SIZES = (flags.get('sizes') ?? '100000,1000000').split(',').map(Number);
const JSON_OUT = flags.get('json');
const gc = (globalThis as { gc?: () => void }).gc;

interface Row {
  readonly signatures: number;
  readonly bytesPerSignature: number;
  readonly heapMiB: number;
  readonly rememberMicros: number;
}

function measure(size: number, collect: () => void): Row {
  const now = Date.now();
  const signatures = Array.from({ length: size }, (_, i) => createHmac('sha256', 'bench-key').update(String(i)).digest('base64url'));
  collect();
  const before = process.memoryUsage().heapUsed;
  const memory = new SeenSignatures(size, now);
  const start = process.hrtime.bigint();
  for (let i = 0; i < size; i++) memory.remember(signatures[i]!, now + 600_000 + i, now);
  const elapsed = Number(process.hrtime.bigint() - start);
  collect();
  const grown = process.memoryUsage().heapUsed - before;
  // The signatures stay referenced until after the second collection, so that only the memory's growth is counted.
  if (memory.size !== size || signatures.length !== size) throw new Error(`the memory holds ${memory.size} of ${size} signatures`);
  return { signatures: size, bytesPerSignature: grown / size, heapMiB: grown / 2 ** 20, rememberMicros: elapsed / size / 1000 };
}

if (!gc) {
  // The heap can only be measured after a full collection: run again with it exposed.
  const script = fileURLToPath(import.meta.url);
  execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', script, ...process.argv.slice(2)], { stdio: 'inherit' });
} else {
  log(`replay memory: ${SIZES.join(', ')} signatures`);
  const rows = SIZES.map((size) => measure(size, gc));
  console.log(
    table(
      ['signatures', 'heap per signature', 'heap', 'remember (digest included)'],
      rows.map((r) => [r.signatures.toLocaleString('en-US'), `${r.bytesPerSignature.toFixed(1)} B`, `${r.heapMiB.toFixed(1)} MiB`, `${r.rememberMicros.toFixed(2)} µs`]),
    ),
  );
  if (JSON_OUT) writeJson(JSON_OUT, { sizes: SIZES, rows });
}
