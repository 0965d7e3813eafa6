import { describe, expect, it } from 'vitest';
import { TopicError } from '../../../src/bus/errors.js';
import {
  flowSubscriptionName,
  parseQueueId,
  persistenceOf,
  queueId,
  queueToTopic,
  requestResponseSubscriptionName,
  splitPulsarTopic,
  topicAdminUrl,
  subscriptionTypeFor,
} from '../../../src/bus/topics.js';

describe('queueToTopic', () => {
  it.each([
    ['request:tg:agent:default:default', 'non-persistent://tg/request/agent:default:default'],
    ['response:tg:agent:default:default', 'non-persistent://tg/response/agent:default:default'],
    ['flow:tg:triples-store:default:default', 'persistent://tg/flow/triples-store:default:default'],
    ['notify:tg:config', 'non-persistent://tg/notify/config'],
    ['request:tg:config', 'non-persistent://tg/request/config'],
    ['request:tg:librarian:default', 'non-persistent://tg/request/librarian:default'],
    ['flow:other:x', 'persistent://other/flow/x'],
  ])('%s → %s', (id, topic) => {
    expect(queueToTopic(id)).toBe(topic);
  });

  it.each(['non-persistent://tg/request/joke', 'persistent://tg/flow/document-load', 'persistent://public/default/x:y'])(
    'passes the full URI %s through unchanged',
    (uri) => {
      expect(queueToTopic(uri)).toBe(uri);
    },
  );

  it.each([
    ['queue:tg:x', /unknown class "queue"/],
    ['Request:tg:x', /unknown class "Request"/],
    ['request:tg', /expected "class:topicspace:topic"/],
    ['agent', /expected "class:topicspace:topic"/],
    ['', /expected "class:topicspace:topic"/],
    ['request::agent', /must not be empty/],
    ['request:tg:', /must not be empty/],
  ])('rejects %j with a clear TopicError', (id, message) => {
    expect(() => queueToTopic(id)).toThrow(TopicError);
    expect(() => queueToTopic(id)).toThrow(message);
  });
});

describe('parseQueueId / queueId', () => {
  it('splits on the first two colons only', () => {
    expect(parseQueueId('request:tg:agent:default:default')).toEqual({ cls: 'request', topicspace: 'tg', topic: 'agent:default:default' });
  });

  it('builds ids like TrustGraph queue()', () => {
    expect(queueId('agent:default:default', 'request')).toBe('request:tg:agent:default:default');
    expect(queueId('triples-store:w:f')).toBe('flow:tg:triples-store:w:f');
    expect(queueId('config', 'notify', 'ts')).toBe('notify:ts:config');
  });

  it('persistence by class', () => {
    expect(persistenceOf('flow')).toBe('persistent');
    expect(persistenceOf('request')).toBe('non-persistent');
    expect(persistenceOf('response')).toBe('non-persistent');
    expect(persistenceOf('notify')).toBe('non-persistent');
  });
});

describe('subscriptionTypeFor', () => {
  it.each([
    ['response:tg:agent:default:default', 'Exclusive'],
    ['notify:tg:config', 'Exclusive'],
    ['flow:tg:triples-store:default:default', 'Shared'],
    ['request:tg:agent:default:default', 'Shared'],
    ['non-persistent://tg/response/joke', 'Shared'],
    ['persistent://tg/flow/x', 'Shared'],
  ])('%s → %s', (id, type) => {
    expect(subscriptionTypeFor(id)).toBe(type);
  });

  it('rejects unknown classes', () => {
    expect(() => subscriptionTypeFor('bogus:tg:x')).toThrow(TopicError);
  });
});

describe('subscription names', () => {
  it('flow consumer: <processor-id>--<workspace>--<flow>--<spec-name>', () => {
    expect(flowSubscriptionName('agent-manager', 'default', 'default', 'request')).toBe('agent-manager--default--default--request');
    expect(flowSubscriptionName('p', 'ws', 'f1', 'next')).toBe('p--ws--f1--next');
  });

  it('request/response client: rr-<12 hex>', () => {
    const names = new Set(Array.from({ length: 50 }, () => requestResponseSubscriptionName()));
    for (const name of names) expect(name).toMatch(/^rr-[0-9a-f]{12}$/);
    expect(names.size).toBe(50);
    expect(requestResponseSubscriptionName(() => Buffer.from('abcdef'))).toBe('rr-616263646566');
  });
});

describe('splitPulsarTopic', () => {
  it.each([
    ['non-persistent://tg/request/agent:default:default', { persistence: 'non-persistent', tenant: 'tg', namespace: 'request', topic: 'agent:default:default' }],
    ['persistent://tg/flow/triples-store:default:default', { persistence: 'persistent', tenant: 'tg', namespace: 'flow', topic: 'triples-store:default:default' }],
    ['non-persistent://tg/notify/config', { persistence: 'non-persistent', tenant: 'tg', namespace: 'notify', topic: 'config' }],
  ])('%s', (topic, parts) => {
    expect(splitPulsarTopic(topic)).toEqual(parts);
  });

  it('inverts queueToTopic', () => {
    const parts = splitPulsarTopic(queueToTopic('response:tg:prompt-rag:w:f'));
    expect(`${parts.persistence}://${parts.tenant}/${parts.namespace}/${parts.topic}`).toBe('non-persistent://tg/response/prompt-rag:w:f');
  });

  it.each(['request:tg:agent', 'persistent://tg/flow', 'persistent://tg//x', 'http://tg/flow/x', 'persistent:/tg/flow/x', ''])(
    'rejects %j',
    (topic) => {
      expect(() => splitPulsarTopic(topic)).toThrow(TopicError);
    },
  );
});

describe('topicAdminUrl', () => {
  it("names the topic's resource on the admin API, the local name encoded, a trailing slash dropped", () => {
    expect(topicAdminUrl('http://broker:8080/', 'non-persistent://tg/request/agent:ws:flow')).toBe(
      'http://broker:8080/admin/v2/non-persistent/tg/request/agent%3Aws%3Aflow',
    );
    expect(topicAdminUrl('http://broker:8080', 'persistent://tg/flow/a b')).toBe('http://broker:8080/admin/v2/persistent/tg/flow/a%20b');
  });

  it('refuses a name that is not a full topic', () => {
    expect(() => topicAdminUrl('http://broker:8080', 'request:tg:agent')).toThrow(TopicError);
  });
});
