/**
 * Synthetic `tool` config values, shared by the benchmarks (20 groups, 8 states, each
 * tool in 1–3 groups, listing 0–3 states, a state target on a third, half of them MCP tools with two
 * declared arguments), deterministic for a seed. `variant` changes every description, so a reload with
 * another variant really changes every value.
 */
export const GROUPS = Array.from({ length: 20 }, (_, i) => `group-${String(i).padStart(2, '0')}`);
export const STATES = Array.from({ length: 8 }, (_, i) => `state-${i}`);

/** Deterministic PRNG (mulberry32). */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick<T>(rand: () => number, items: readonly T[], count: number): T[] {
  const pool = [...items];
  const out: T[] = [];
  while (out.length < count && pool.length > 0) out.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]!);
  return out;
}

/** config key → JSON string. */
export function syntheticTools(count: number, variant = 0, seed = 1): Record<string, string> {
  const rand = random(seed);
  const tools: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const states = pick(rand, STATES, Math.floor(rand() * 4));
    const mcp = rand() < 0.5;
    tools[`tool-${String(i).padStart(5, '0')}`] = JSON.stringify({
      type: mcp ? 'mcp-tool' : 'knowledge-query',
      name: `tool_${i}`,
      description: `Synthetic tool number ${i}${variant ? ` (revision ${variant})` : ''}`,
      group: pick(rand, GROUPS, 1 + Math.floor(rand() * 3)),
      ...(states.length > 0 ? { 'applicable-states': states } : {}),
      ...(rand() < 1 / 3 ? { state: STATES[Math.floor(rand() * STATES.length)] } : {}),
      ...(mcp
        ? {
            'mcp-tool': `server-${i % 7}`,
            arguments: [
              { name: 'id', type: 'string', description: 'Identifier' },
              { name: 'limit', type: 'integer', description: 'How many', required: false },
            ],
          }
        : {}),
    });
  }
  return tools;
}
