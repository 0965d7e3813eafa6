import { AssignerProtocol, type Cluster, type Logger, type PartitionMetadata } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { KAFKA_ASSIGNOR_NAME, roundRobinAssigner, stickyRoundRobinAssigner } from '../../../src/bus/kafka/assigner.js';

/**
 * The part of kafkajs's cluster the assignor reads: partition counts by topic. As a broker does, a metadata
 * request naming a topic it does not know fails as a whole; `loaded: false` is a cluster with no metadata yet.
 */
function cluster(partitions: Record<string, number>, { loaded = true } = {}): Cluster {
  const fetched = new Set<string>();
  const addMultipleTargetTopics = async (topics: string[]) => {
    const unknown = topics.filter((t) => !(t in partitions));
    if (!loaded || unknown.length > 0) throw Object.assign(new Error('This server does not host this topic-partition'), { type: 'UNKNOWN_TOPIC_OR_PARTITION', retriable: true });
    for (const topic of topics) fetched.add(topic);
  };
  return {
    addMultipleTargetTopics,
    addTargetTopic: (topic: string) => addMultipleTargetTopics([topic]),
    findTopicPartitionMetadata: (topic: string) => {
      if (fetched.size === 0) throw Object.assign(new Error('Topic metadata not loaded'), { name: 'KafkaJSTopicMetadataNotLoaded' });
      if (!fetched.has(topic)) return [];
      return Array.from({ length: partitions[topic] ?? 0 }, (_, partitionId) => ({ partitionId }) as PartitionMetadata);
    },
  } as unknown as Cluster;
}

/** kafkajs's logger, keeping the warnings. */
function logger(warnings: string[] = []): Logger {
  const log: Logger = {
    info: () => undefined,
    error: () => undefined,
    warn: (message) => void warnings.push(message),
    debug: () => undefined,
    namespace: () => log,
    setLogLevel: () => undefined,
  };
  return log;
}

const member = (memberId: string, topics: string[]) => ({ memberId, memberMetadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }) });

async function assign(on: Cluster, members: { memberId: string; memberMetadata: Buffer }[], warnings?: string[]) {
  const assigner = roundRobinAssigner({ cluster: on, groupId: 'g', logger: logger(warnings) });
  const result = await assigner.assign({ members, topics: [] });
  return Object.fromEntries(result.map((r) => [r.memberId, AssignerProtocol.MemberAssignment.decode(r.memberAssignment)?.assignment]));
}

/** A member as a tg-agent subscription offers itself: the partitions it holds in its metadata's user data. */
function holding(memberId: string, topics: string[], held: Record<string, number[]>) {
  const offered = stickyRoundRobinAssigner(() => held)({ cluster: cluster({}), groupId: 'g', logger: logger() }).protocol({ topics });
  return { memberId, memberMetadata: offered.metadata };
}

describe('the round-robin assignor of tg-agent consumer groups', () => {
  it("is offered under the name TrustGraph's aiokafka consumers use, with Kafka's standard metadata", () => {
    const assigner = roundRobinAssigner({ cluster: cluster({}), groupId: 'g', logger: logger() });
    const offered = assigner.protocol({ topics: ['t'] });
    expect(offered.name).toBe(KAFKA_ASSIGNOR_NAME);
    expect(KAFKA_ASSIGNOR_NAME).toBe('roundrobin');
    expect(AssignerProtocol.MemberMetadata.decode(offered.metadata)?.topics).toEqual(['t']);
  });

  it('deals the partitions of a shared topic round the members in member-id order', async () => {
    expect(await assign(cluster({ t: 4 }), [member('b', ['t']), member('a', ['t'])])).toEqual({ a: { t: [0, 2] }, b: { t: [1, 3] } });
  });

  it('gives a member only partitions of topics it reads, when one group reads several topics', async () => {
    const assigned = await assign(cluster({ one: 1, two: 1 }), [member('a', ['one']), member('b', ['two'])]);
    expect(assigned).toEqual({ a: { one: [0] }, b: { two: [0] } });
  });

  it('leaves a member with nothing when there are fewer partitions than members', async () => {
    expect(await assign(cluster({ t: 1 }), [member('a', ['t']), member('b', ['t'])])).toEqual({ a: { t: [0] }, b: {} });
  });

  describe('a group caught mid-change', () => {
    it('assigns nothing to a group with no members, or whose members read nothing', async () => {
      expect(await assign(cluster({ t: 1 }), [])).toEqual({});
      expect(await assign(cluster({ t: 1 }), [member('a', [])])).toEqual({ a: {} });
    });

    it('gives nothing to a member whose metadata cannot be read, says so, and assigns the others', async () => {
      const warnings: string[] = [];
      const cut = member('a', ['t']).memberMetadata.subarray(0, 5);
      const assigned = await assign(cluster({ t: 2 }), [{ memberId: 'a', memberMetadata: cut }, { memberId: 'b', memberMetadata: Buffer.alloc(0) }, member('c', ['t'])], warnings);
      expect(assigned).toEqual({ a: {}, b: {}, c: { t: [0, 1] } });
      expect(warnings).toEqual([expect.stringContaining('member a of group g'), expect.stringContaining('member b of group g')]);
    });

    it('leaves out a topic the cluster does not know, says so, and assigns the topics it does', async () => {
      const warnings: string[] = [];
      const assigned = await assign(cluster({ t: 2 }), [member('a', ['gone']), member('b', ['gone', 't'])], warnings);
      expect(assigned).toEqual({ a: {}, b: { t: [0, 1] } });
      expect(warnings).toEqual([expect.stringContaining('gone')]);
    });

    it('assigns nothing, rather than failing the join, when the cluster has no metadata at all', async () => {
      const warnings: string[] = [];
      expect(await assign(cluster({ t: 1 }, { loaded: false }), [member('a', ['t'])], warnings)).toEqual({ a: {} });
      expect(warnings).toEqual([expect.stringContaining('t')]);
    });
  });

  describe('partitions staying where they are read', () => {
    it('leaves a partition with the member that holds it, whatever its place in the round', async () => {
      // Round robin alone gives the one partition to 'a'; 'b' was reading it when the group rejoined.
      expect(await assign(cluster({ t: 1 }), [member('a', ['t']), holding('b', ['t'], { t: [0] })])).toEqual({ a: {}, b: { t: [0] } });
      expect(await assign(cluster({ t: 4 }), [holding('a', ['t'], { t: [1, 3] }), holding('b', ['t'], { t: [0] })])).toEqual({ a: { t: [1, 3] }, b: { t: [0, 2] } });
    });

    it("keeps no more than a member's fair share with it, so a member that joins is given its part", async () => {
      const assigned = await assign(cluster({ t: 4 }), [holding('a', ['t'], { t: [0, 1, 2, 3] }), member('b', ['t'])]);
      expect(assigned).toEqual({ a: { t: [0, 1] }, b: { t: [2, 3] } });
    });

    it("takes user data it cannot read (another client's) as holding nothing", async () => {
      const foreign = { memberId: 'b', memberMetadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics: ['t'], userData: Buffer.from([0, 1, 2]) }) };
      const oddShape = holding('c', ['t'], { t: 'all' as unknown as number[] });
      expect(await assign(cluster({ t: 3 }), [member('a', ['t']), foreign, oddShape])).toEqual({ a: { t: [0] }, b: { t: [1] }, c: { t: [2] } });
    });
  });
});
