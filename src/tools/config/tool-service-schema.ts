/**
 * The shape of one TrustGraph `tool-service` config entry (docs/trustgraph-agent-notes.md §2.5): the queues of a dynamic tool
 * service and the config params its tools pass to it. Tools refer to a descriptor by its **config key**;
 * the `id` inside is never read. `schemas/tool-service.schema.json` is generated from this schema.
 */
import { z } from 'zod';
import { describeValue } from '../../errors/index.js';
import { stringList } from './tool-config-schema.js';

function queueId(which: string) {
  return z
    .string({
      error: (issue) =>
        issue.input === undefined
          ? `required: the full queue id of the service's ${which} (e.g. "non-persistent://tg/${which}/joke")`
          : `expected a non-empty string, got ${describeValue(issue.input)}`,
    })
    .regex(/\S/, { error: 'expected a non-empty string' });
}

/** A config param: a bare name, or `{name, required?}`. */
export const ToolServiceConfigParamSchema = z
  .union(
    [
      z.string().regex(/\S/),
      z.looseObject({
        name: z.string().regex(/\S/),
        required: z.boolean().nullable().optional().meta({ default: false }),
      }),
    ],
    {
      error: (issue) =>
        `expected a parameter name or {"name": <non-empty string>, "required"?: <boolean>}, got ${describeValue(issue.input)}`,
    },
  )
  .meta({ description: 'A key of the tool entry whose value is passed to the service as config' });

export const ToolServiceConfigSchema = z
  .looseObject({
    id: z.string().nullable().optional().meta({ description: 'Informational; tools refer to the config key' }),
    'request-queue': queueId('request').meta({ description: 'Full queue id requests are sent to' }),
    'response-queue': queueId('response').meta({ description: 'Full queue id responses arrive on' }),
    'config-params': z
      .array(ToolServiceConfigParamSchema, {
        error: (issue) => `expected a list of config params, got ${describeValue(issue.input)}`,
      })
      .nullable()
      .optional()
      .meta({ description: 'Keys a tool using this service may (or must) carry' }),
    group: stringList('group names')
      .nullable()
      .optional()
      .meta({ description: "Ours: the groups of every tool of this service that names no `group` of its own" }),
  })
  .meta({
    title: 'TrustGraph tool service',
    description: 'One value of TrustGraph config type "tool-service"; tools of type "tool-service" name its config key.',
  });

export type ToolServiceConfigInput = z.input<typeof ToolServiceConfigSchema>;
export type ToolServiceConfig = z.output<typeof ToolServiceConfigSchema>;
