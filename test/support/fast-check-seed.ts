/**
 * Seeds of property-based tests: each run prints the seed it uses, and `FC_SEED=<n>` replays one. A seed that
 * ever found a failure is kept as a fixed regression example next to the property (fast-check `examples`).
 */
import { randomInt } from 'node:crypto';

export function propertySeed(name: string): { seed: number } {
  const fromEnv = process.env.FC_SEED?.trim();
  const seed = fromEnv ? Number(fromEnv) : randomInt(2 ** 31 - 1);
  console.info(`[fast-check] ${name}: seed ${seed} (replay with FC_SEED=${seed})`);
  return { seed };
}
