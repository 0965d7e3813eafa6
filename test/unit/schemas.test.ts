// The JSON Schemas in schemas/ must be what the zod schemas in src/tools generate today.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generateJsonSchemas } from '../../src/tools/config/json-schemas.js';
import { TOOL_TYPES } from '../../src/tools/config/tool-config-schema.js';

const SCHEMAS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'schemas');
const generated = generateJsonSchemas();

function onDisk(file: string): string {
  try {
    return readFileSync(join(SCHEMAS_DIR, file), 'utf8');
  } catch {
    return `(schemas/${file} is missing)`;
  }
}

describe('schemas/', () => {
  it.each(Object.keys(generated))('%s matches the zod schemas', (file) => {
    expect(onDisk(file), `schemas/${file} is out of date with src/tools: run \`npm run schemas\``).toBe(
      generated[file as keyof typeof generated],
    );
  });

  it('tool.schema.json is a draft 2020-12 union over the seven tool types', () => {
    const schema = JSON.parse(generated['tool.schema.json']) as {
      $schema: string;
      oneOf: { properties: { type: { const: string } }; required: string[] }[];
    };
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.oneOf.map((variant) => variant.properties.type.const)).toEqual([...TOOL_TYPES]);
    for (const variant of schema.oneOf) expect(variant.required).toEqual(expect.arrayContaining(['type', 'name']));
  });

  it('tool-service.schema.json requires both queues', () => {
    const schema = JSON.parse(generated['tool-service.schema.json']) as { required: string[] };
    expect(schema.required).toEqual(['request-queue', 'response-queue']);
  });
});
