// docs/trustgraph-agent-notes.md §2.5: tool-service descriptors and the tools that use them, each checked on its own.
import { describe, expect, it } from 'vitest';
import { registryOf } from '../../support/registry-fixtures.js';

const joke = {
  id: 'joke-service',
  'request-queue': 'non-persistent://tg/request/joke',
  'response-queue': 'non-persistent://tg/response/joke',
  'config-params': ['style', { name: 'audience', required: true }, { name: 'tone' }],
};

const jokeTool = (extra: Record<string, unknown> = {}) => ({
  type: 'tool-service',
  name: 'tell_joke',
  description: 'Tell a joke',
  service: 'joke',
  audience: 'kids',
  arguments: [{ name: 'topic', type: 'string', description: 'What the joke is about' }],
  ...extra,
});

describe('tool-service tools', () => {
  it('resolve their service by config key and copy the config params present on the tool', () => {
    const { registry, problems } = registryOf({ t: jokeTool({ style: { length: 'short' } }) }, { joke });
    expect(problems).toEqual([]);
    const tool = registry.get('tell_joke')!;
    expect(tool.type).toBe('tool-service');
    if (tool.type !== 'tool-service') return;
    expect(tool.service).toMatchObject({
      key: 'joke',
      requestQueue: 'non-persistent://tg/request/joke',
      responseQueue: 'non-persistent://tg/response/joke',
      configParams: [
        { name: 'style', required: false },
        { name: 'audience', required: true },
        { name: 'tone', required: false },
      ],
    });
    expect(tool.serviceConfig).toEqual({ style: { length: 'short' }, audience: 'kids' });
    expect(tool.arguments.map((a) => a.name)).toEqual(['topic']);
  });

  it('a tool whose service is missing is left out', () => {
    const { registry, problems } = registryOf({ t: jokeTool({ service: undefined }), u: jokeTool({ name: 'ok' }) }, { joke });
    expect(registry.tools.map((tool) => tool.name)).toEqual(['ok']);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ key: 't', name: 'tell_joke', field: 'service' });
    expect(problems[0]!.message).toMatch(/^required: the key of an entry in config type "tool-service"/);
  });

  it('a tool whose service is unknown is left out, naming the known ones', () => {
    const { registry, problems } = registryOf({ t: jokeTool({ service: 'jokes' }) }, { joke });
    expect(registry.tools).toEqual([]);
    expect(problems[0]).toMatchObject({ field: 'service', message: 'unknown tool-service "jokes" (known: joke)' });
  });

  it('looks up the config key, not the descriptor\'s id', () => {
    const { problems } = registryOf({ t: jokeTool({ service: 'joke-service' }) }, { joke });
    expect(problems[0]!.message).toContain('unknown tool-service "joke-service"');
  });

  it('a tool missing a required config param is left out', () => {
    const { registry, problems } = registryOf({ t: jokeTool({ audience: undefined }) }, { joke });
    expect(registry.tools).toEqual([]);
    expect(problems[0]).toMatchObject({ field: 'audience', message: 'required: config param of tool-service "joke"' });
  });

  it('a tool of an invalid service points at the service\'s own problem', () => {
    const { registry, problems } = registryOf({ t: jokeTool() }, { joke: { ...joke, 'response-queue': '' } });
    expect(registry.tools).toEqual([]);
    expect(registry.toolServices.size).toBe(0);
    expect(problems.map((problem) => [problem.kind, problem.key, problem.field])).toEqual([
      ['tool-service', 'joke', 'response-queue'],
      ['tool', 't', 'service'],
    ]);
    expect(problems[1]!.message).toBe('tool-service "joke" is invalid (see its own problem)');
  });
});

describe('tool-service descriptors', () => {
  it('require both queues', () => {
    const { problems } = registryOf({}, { a: { 'request-queue': 'q' }, b: { 'request-queue': 7, 'response-queue': 'r' } });
    expect(problems.map((problem) => [problem.key, problem.field, problem.message.split(' (e.g.')[0]])).toEqual([
      ['a', 'response-queue', "required: the full queue id of the service's response"],
      ['b', 'request-queue', 'expected a non-empty string, got a number (7)'],
    ]);
  });

  it('reject malformed config params', () => {
    const { problems } = registryOf({}, { a: { ...joke, 'config-params': ['ok', 3, { required: true }] } });
    expect(problems.map((problem) => problem.field)).toEqual(['config-params[1]', 'config-params[2]']);
  });

  it('accept a descriptor without config params', () => {
    const { registry, problems } = registryOf(
      { t: { type: 'tool-service', name: 'plain', service: 'p' } },
      { p: { 'request-queue': 'q', 'response-queue': 'r', 'config-params': null } },
    );
    expect(problems).toEqual([]);
    const tool = registry.get('plain');
    expect(tool?.type === 'tool-service' && tool.serviceConfig).toEqual({});
  });
});
