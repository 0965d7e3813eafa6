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
 */
import { AssignerProtocol, type GroupMemberAssignment, type PartitionAssigner } from 'kafkajs';

export const KAFKA_ASSIGNOR_NAME = 'roundrobin';

export const roundRobinAssigner: PartitionAssigner = ({ cluster }) => ({
  name: KAFKA_ASSIGNOR_NAME,
  version: 0,
  async assign({ members }): Promise<GroupMemberAssignment[]> {
    const readers = members
      .map(({ memberId, memberMetadata }) => ({ memberId, topics: new Set(AssignerProtocol.MemberMetadata.decode(memberMetadata)?.topics ?? []) }))
      .sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0));
    const topics = [...new Set(readers.flatMap((r) => [...r.topics]))].sort();
    await cluster.addMultipleTargetTopics(topics);
    const assignment = new Map(readers.map((r) => [r.memberId, {} as Record<string, number[]>]));
    let next = 0;
    for (const topic of topics) {
      const partitions = cluster
        .findTopicPartitionMetadata(topic)
        .map((p) => p.partitionId)
        .sort((a, b) => a - b);
      for (const partition of partitions) {
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
