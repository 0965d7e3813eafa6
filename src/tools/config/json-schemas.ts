/**
 * JSON Schemas of the tool configuration, generated from the zod schemas (input side, draft 2020-12).
 * `npm run schemas` writes them to `schemas/`; `test/unit/schemas.test.ts` fails when the files drift.
 */
import { z } from 'zod';
import { ToolConfigSchema } from './tool-config-schema.js';
import { ToolServiceConfigSchema } from './tool-service-schema.js';

/** File name under `schemas/` → zod schema it is generated from. */
export const JSON_SCHEMA_SOURCES = {
  'tool.schema.json': ToolConfigSchema,
  'tool-service.schema.json': ToolServiceConfigSchema,
} as const;

export type JsonSchemaFile = keyof typeof JSON_SCHEMA_SOURCES;

/** The text of each schema file: pretty-printed JSON with a trailing newline. */
export function generateJsonSchemas(): Record<JsonSchemaFile, string> {
  const render = (schema: z.ZodType): string =>
    `${JSON.stringify(z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'throw' }), null, 2)}\n`;
  return {
    'tool.schema.json': render(JSON_SCHEMA_SOURCES['tool.schema.json']),
    'tool-service.schema.json': render(JSON_SCHEMA_SOURCES['tool-service.schema.json']),
  };
}
