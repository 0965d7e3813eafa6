import { AssignerProtocol, type Cluster, type PartitionMetadata } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { KAFKA_ASSIGNOR_NAME, roundRobinAssigner } from '../../../src/bus/kafka/assigner.js';

/** The part of kafkajs's cluster the assignor reads: partition counts by topic. */
function cluster(partitions: Record<string, number>): Cluster {
  const fetched: string[] = [];
  return {
    addMultipleTargetTopics: async (topics: string[]) => {
      fetched.push(...topics);
    },
    findTopicPartitionMetadata: (topic: string) => {
      if (!fetched.includes(topic)) throw new Error(`no metadata fetched for ${topic}`);
      return Array.from({ length: partitions[topic] ?? 0 }, (_, partitionId) => ({ partitionId }) as PartitionMetadata);
    },
  } as unknown as Cluster;
}

const member = (memberId: string, topics: string[]) => ({ memberId, memberMetadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }) });

async function assign(partitions: Record<string, number>, members: ReturnType<typeof member>[]) {
  const assigner = roundRobinAssigner({ cluster: cluster(partitions), groupId: 'g', logger: undefined as never });
  const result = await assigner.assign({ members, topics: [] });
  return Object.fromEntries(result.map((r) => [r.memberId, AssignerProtocol.MemberAssignment.decode(r.memberAssignment)?.assignment]));
}

describe('the round-robin assignor of tg-agent consumer groups', () => {
  it("is offered under the name TrustGraph's aiokafka consumers use, with Kafka's standard metadata", () => {
    const assigner = roundRobinAssigner({ cluster: cluster({}), groupId: 'g', logger: undefined as never });
    const offered = assigner.protocol({ topics: ['t'] });
    expect(offered.name).toBe(KAFKA_ASSIGNOR_NAME);
    expect(KAFKA_ASSIGNOR_NAME).toBe('roundrobin');
    expect(AssignerProtocol.MemberMetadata.decode(offered.metadata)?.topics).toEqual(['t']);
  });

  it('deals the partitions of a shared topic round the members in member-id order', async () => {
    expect(await assign({ t: 4 }, [member('b', ['t']), member('a', ['t'])])).toEqual({ a: { t: [0, 2] }, b: { t: [1, 3] } });
  });

  it('gives a member only partitions of topics it reads, when one group reads several topics', async () => {
    const assigned = await assign({ one: 1, two: 1 }, [member('a', ['one']), member('b', ['two'])]);
    expect(assigned).toEqual({ a: { one: [0] }, b: { two: [0] } });
  });

  it('leaves a member with nothing when there are fewer partitions than members', async () => {
    expect(await assign({ t: 1 }, [member('a', ['t']), member('b', ['t'])])).toEqual({ a: { t: [0] }, b: {} });
  });
});
