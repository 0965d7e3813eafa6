import { describe, expect, it } from 'vitest';
import { exchangeFor, queueFor, rabbitMqUrl } from '../../../src/bus/rabbitmq/topology.js';
import { queueToTopic } from '../../../src/bus/topics.js';

describe("TrustGraph's RabbitMQ names", () => {
  it('puts a queue id on the fanout exchange topicspace.class.topic, durable for flow topics only', () => {
    expect(exchangeFor(queueToTopic('request:tg:agent:default:default'))).toEqual({ exchange: 'tg.request.agent:default:default', cls: 'request', durable: false });
    expect(exchangeFor(queueToTopic('response:tg:agent:default:default'))).toEqual({ exchange: 'tg.response.agent:default:default', cls: 'response', durable: false });
    expect(exchangeFor(queueToTopic('notify:tg:config'))).toEqual({ exchange: 'tg.notify.config', cls: 'notify', durable: false });
    expect(exchangeFor(queueToTopic('flow:tg:triples-store:default'))).toEqual({ exchange: 'tg.flow.triples-store:default', cls: 'flow', durable: true });
  });

  it('gives response and notify subscribers a private queue, and every other subscription the queue <exchange>.<subscription>', () => {
    const responses = exchangeFor(queueToTopic('response:tg:prompt:default'));
    expect(queueFor(responses, 'rr-0a1b2c', 'Exclusive')).toEqual({ kind: 'private' });
    const requests = exchangeFor(queueToTopic('request:tg:agent:default:default'));
    expect(queueFor(requests, 'agent-manager--default--default--request', 'Shared')).toEqual({
      kind: 'named',
      name: 'tg.request.agent:default:default.agent-manager--default--default--request',
      durable: false,
      singleActive: false,
      exclusiveConsumer: false,
    });
  });

  it('keeps our own persistent topics durable, one consumer at a time for Key_Shared and Failover', () => {
    const aggregation = exchangeFor('persistent://tg/request/agent:default:default-aggregation');
    expect(aggregation).toEqual({ exchange: 'tg.request.agent:default:default-aggregation', cls: 'request', durable: true });
    expect(queueFor(aggregation, 'agent-manager--aggregation', 'Key_Shared')).toMatchObject({ kind: 'named', durable: true, singleActive: true });
    expect(queueFor(aggregation, 'x', 'Exclusive')).toMatchObject({ singleActive: false, exclusiveConsumer: true });
  });

  it("builds the AMQP URL from TrustGraph's options, the vhost encoded", () => {
    expect(rabbitMqUrl({ host: 'rabbitmq', port: 5672, username: 'guest', password: 'p@ss/word', vhost: '/' })).toBe('amqp://guest:p%40ss%2Fword@rabbitmq:5672/%2F');
  });
});
