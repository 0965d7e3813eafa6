import { describe, expect, it } from 'vitest';
import {
  configPushCodec,
  configRequestCodec,
  configResponseCodec,
  makeConfigPush,
  makeConfigRequest,
  makeConfigResponse,
} from '../../../src/wire/index.js';

describe('ConfigRequest', () => {
  it('encodes the docs/trustgraph-wire-notes.md §2.3 example byte for byte', () => {
    const request = makeConfigRequest({ operation: 'getvalues', workspace: 'default', type: 'tool' });
    expect(configRequestCodec.encode(request).toString()).toBe(
      '{"operation": "getvalues", "workspace": "default", "keys": [], "type": "tool", "values": []}',
    );
  });

  it('round-trips keys and values', () => {
    const request = makeConfigRequest({
      operation: 'put',
      workspace: 'w',
      keys: [{ type: 'tool', key: 'k' }],
      values: [{ type: 'tool', key: 'k', value: '{"name": "x"}' }],
    });
    expect(request.values[0]).toEqual({ type: 'tool', key: 'k', value: '{"name": "x"}', workspace: '' });
    expect(configRequestCodec.decode(configRequestCodec.encode(request))).toEqual(request);
  });
});

describe('ConfigResponse', () => {
  it('decodes the docs/trustgraph-wire-notes.md §2.3 example', () => {
    const response = configResponseCodec.decode(
      '{"version": 57, "values": [{"type": "tool", "key": "knowledge-query", "value": "{\\"name\\": \\"kq\\"}", "workspace": ""}], ' +
        '"directory": [], "config": {}, "error": null}',
    );
    expect(response).toEqual({
      version: 57,
      values: [{ type: 'tool', key: 'knowledge-query', value: '{"name": "kq"}', workspace: '' }],
      directory: [],
      config: {},
      error: null,
    });
  });

  it('keeps a null value (missing key on get) distinct from an empty one', () => {
    const response = configResponseCodec.decode('{"values": [{"type": "t", "key": "a", "value": null}, {"type": "t", "key": "b"}]}');
    expect(response.values.map((v) => v.value)).toEqual([null, '']);
    expect(JSON.parse(configResponseCodec.encode(response).toString())).toMatchObject({ values: [{ value: null }, { value: '' }] });
  });

  it('round-trips the config map and an error, in field order', () => {
    const response = makeConfigResponse({
      version: 3,
      directory: ['a', 'b'],
      config: { tool: { a: '{}', b: '[]' }, prompt: {} },
      error: { type: 'bad-operation', message: 'nope' },
    });
    const encoded = configResponseCodec.encode(response);
    expect(Object.keys(JSON.parse(encoded.toString()) as object)).toEqual(['version', 'values', 'directory', 'config', 'error']);
    expect(configResponseCodec.decode(encoded)).toEqual(response);
  });

  it('tolerates nulls and unknown keys', () => {
    expect(configResponseCodec.decode('{"version": null, "values": null, "directory": null, "config": null, "extra": 1}')).toEqual(
      makeConfigResponse(),
    );
  });
});

describe('ConfigPush', () => {
  it('decodes the docs/trustgraph-wire-notes.md §2.4 example and re-encodes it identically', () => {
    const text =
      '{"version": 58, "changes": {"processor:agent-manager": ["default"], "flow": ["default"]}, "workspace_changes": null}';
    const push = configPushCodec.decode(text);
    expect(push).toEqual({ version: 58, changes: { 'processor:agent-manager': ['default'], flow: ['default'] }, workspace_changes: null });
    expect(configPushCodec.encode(push).toString()).toBe(text);
  });

  it('round-trips workspace changes', () => {
    const push = makeConfigPush({ version: 2, workspace_changes: { created: ['w1'] } });
    expect(push.workspace_changes).toEqual({ created: ['w1'], deleted: [] });
    expect(configPushCodec.decode(configPushCodec.encode(push))).toEqual(push);
  });

  it('the startup push with empty changes', () => {
    expect(configPushCodec.decode('{"version": 1, "changes": {}}')).toEqual({ version: 1, changes: {}, workspace_changes: null });
  });
});
