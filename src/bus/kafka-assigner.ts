/**
 * The partition assignor of tg-agent's consumer groups: Kafka's round-robin assignment, under the name
 * TrustGraph's Kafka clients give it.
 *
 * - **The name.** Every member of a group names the assignors it can run, and the broker refuses a member that
 *   shares none with the group (INCONSISTENT_GROUP_PROTOCOL). TrustGraph's consumers (aiokafka) offer only
 *   `roundrobin`, as Kafka's own clients name it; kafkajs calls its own `RoundRobinAssigner`. Member metadata and
 *   assignments are Kafka's standard consumer protocol, so under the shared name tg-agent and TrustGraph's
 *   services can be members of one group (a mixed fleet on one request topic), whichever of them leads it.
 * - **The assignment.** kafkajs's own assignor deals out the leader's topics to every member, as if all
 *   subscribed to the same topics. A subscription name can be one group on several topics (a stand-in's, or
 *   a service's on each of its flows), so this one does what Kafka's RoundRobinAssignor does: the partitions
 *   of every topic any member reads, in order, each to the next member (by member id, circularly) that reads
 *   its topic.
 * - **A group caught mid-change.** The leader assigns whatever the group is at that moment, and a throw here
 *   fails the join of every member. So, as Kafka's own assignors do, a member whose metadata cannot be read
 *   reads nothing in this generation, and a topic without metadata (deleted, or not made yet) is left out;
 *   everything else is assigned as usual. The next rebalance assigns them once they are whole.
 */
import { AssignerProtocol, type Cluster, type GroupMember, type GroupMemberAssignment, type Logger, type PartitionAssigner } from 'kafkajs';
import { errorMessage } from '../errors/error-text.js';

export const KAFKA_ASSIGNOR_NAME = 'roundrobin';

export const roundRobinAssigner: PartitionAssigner = ({ cluster, groupId, logger }) => ({
  name: KAFKA_ASSIGNOR_NAME,
  version: 0,
  async assign({ members }): Promise<GroupMemberAssignment[]> {
    const readers = members
      .map((member) => ({ memberId: member.memberId, topics: new Set(subscribedTopics(member, groupId, logger)) }))
      .sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0));
    const topics = [...new Set(readers.flatMap((r) => [...r.topics]))].sort();
    const partitions = await partitionsByTopic(cluster, topics, groupId, logger);
    const assignment = new Map(readers.map((r) => [r.memberId, {} as Record<string, number[]>]));
    let next = 0;
    for (const topic of topics) {
      for (const partition of partitions.get(topic) ?? []) {
        for (let tried = 0; tried < readers.length; tried++) {
          const reader = readers[(next + tried) % readers.length]!;
          if (!reader.topics.has(topic)) continue;
          (assignment.get(reader.memberId)![topic] ??= []).push(partition);
          next = (next + tried + 1) % readers.length;
          break;
        }
      }
    }
    return readers.map(({ memberId }) => ({
      memberId,
      memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: assignment.get(memberId)!, userData: Buffer.alloc(0) }),
    }));
  },
  protocol({ topics }) {
    return { name: KAFKA_ASSIGNOR_NAME, metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }) };
  },
});

/** The topics a member reads, from its metadata; none when that cannot be read (empty or cut short). */
function subscribedTopics({ memberId, memberMetadata }: GroupMember, groupId: string, logger: Logger): string[] {
  try {
    return AssignerProtocol.MemberMetadata.decode(memberMetadata)?.topics ?? [];
  } catch (err) {
    logger.warn(`member ${memberId} of group ${groupId} sent metadata that cannot be read (${errorMessage(err)}): it reads nothing until the next rebalance`);
    return [];
  }
}

/**
 * Each topic's partition ids, in order; none for a topic the cluster has no metadata for. A metadata request
 * for several topics fails when one of them is unknown, so after such a failure each is asked alone (kafkajs
 * then leaves the unknown one out of the topics it keeps asking about).
 */
async function partitionsByTopic(cluster: Cluster, topics: string[], groupId: string, logger: Logger): Promise<Map<string, number[]>> {
  if (topics.length === 0) return new Map();
  await cluster.addMultipleTargetTopics(topics).catch(async () => {
    for (const topic of topics) await cluster.addTargetTopic(topic).catch(() => undefined);
  });
  const partitions = new Map<string, number[]>();
  for (const topic of topics) {
    let ids: number[] = [];
    try {
      ids = cluster
        .findTopicPartitionMetadata(topic)
        .map((p) => p.partitionId)
        .sort((a, b) => a - b);
    } catch {
      // No metadata loaded at all: left with none, as a topic the cluster does not know.
    }
    if (ids.length === 0) logger.warn(`no partitions of ${topic} are known to group ${groupId}'s leader: none is assigned until the next rebalance`);
    partitions.set(topic, ids);
  }
  return partitions;
}
