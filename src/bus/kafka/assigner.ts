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
 * - **A partition stays where it is read.** Each member says in its metadata's user data which partitions it
 *   holds (has taken messages from and not given up), and the leader leaves each with that member, up to the
 *   member's fair share of the topic, before dealing out the rest. A group whose coordinator moved (a broker
 *   lost) has every member join again; dealt out afresh, a partition could go to another member, which reads
 *   from the group's offset and runs again what the first was running and had not committed. Kafka's own
 *   sticky assignors keep partitions for the same reason. A member that says nothing (TrustGraph's, whose user
 *   data is empty) holds nothing, and a leader that is not tg-agent ignores what the others say.
 * - **A group caught mid-change.** The leader assigns whatever the group is at that moment, and a throw here
 *   fails the join of every member. So, as Kafka's own assignors do, a member whose metadata cannot be read
 *   reads nothing in this generation, and a topic without metadata (deleted, or not made yet) is left out;
 *   everything else is assigned as usual. The next rebalance assigns them once they are whole.
 */
import { AssignerProtocol, type Cluster, type GroupMember, type GroupMemberAssignment, type Logger, type PartitionAssigner } from 'kafkajs';
import { errorMessage } from '../../errors/index.js';

export const KAFKA_ASSIGNOR_NAME = 'roundrobin';

/** The partitions a member holds, by topic. */
export type HeldPartitions = Record<string, number[]>;

/** The assignor of a member that holds the partitions `held()` gives at each join. */
export function stickyRoundRobinAssigner(held: () => HeldPartitions): PartitionAssigner {
  return ({ cluster, groupId, logger }) => ({
    name: KAFKA_ASSIGNOR_NAME,
    version: 0,
    async assign({ members }): Promise<GroupMemberAssignment[]> {
      const readers = members
        .map((member) => ({ memberId: member.memberId, ...readMetadata(member, groupId, logger) }))
        .sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0));
      const topics = [...new Set(readers.flatMap((r) => [...r.topics]))].sort();
      const partitions = await partitionsByTopic(cluster, topics, groupId, logger);
      const assignment = new Map(readers.map((r) => [r.memberId, {} as Record<string, number[]>]));
      let next = 0;
      for (const topic of topics) {
        const ids = partitions.get(topic) ?? [];
        const fairShare = Math.ceil(ids.length / Math.max(1, readers.filter((r) => r.topics.has(topic)).length));
        const given = (memberId: string): number[] => (assignment.get(memberId)![topic] ??= []);
        const left = ids.filter((partition) => {
          const holder = readers.find((r) => r.topics.has(topic) && r.held[topic]?.includes(partition) && given(r.memberId).length < fairShare);
          if (holder) given(holder.memberId).push(partition);
          return !holder;
        });
        for (const partition of left) {
          for (let tried = 0; tried < readers.length; tried++) {
            const reader = readers[(next + tried) % readers.length]!;
            if (!reader.topics.has(topic) || given(reader.memberId).length >= fairShare) continue;
            given(reader.memberId).push(partition);
            next = (next + tried + 1) % readers.length;
            break;
          }
        }
        for (const { memberId } of readers) if (assignment.get(memberId)![topic]?.length === 0) delete assignment.get(memberId)![topic];
      }
      return readers.map(({ memberId }) => ({
        memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: assignment.get(memberId)!, userData: Buffer.alloc(0) }),
      }));
    },
    protocol({ topics }) {
      const userData = Buffer.from(JSON.stringify(held()));
      return { name: KAFKA_ASSIGNOR_NAME, metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData }) };
    },
  });
}

/** The assignor of a member that holds nothing (a new member, a plain reader). */
export const roundRobinAssigner: PartitionAssigner = stickyRoundRobinAssigner(() => ({}));

/** What a member's metadata says: the topics it reads, and the partitions it holds (none when unsaid or unreadable). */
function readMetadata(member: GroupMember, groupId: string, logger: Logger): { topics: Set<string>; held: HeldPartitions } {
  const topics = new Set(subscribedTopics(member, groupId, logger));
  const held: HeldPartitions = {};
  try {
    const userData = AssignerProtocol.MemberMetadata.decode(member.memberMetadata)?.userData;
    const parsed: unknown = userData && userData.length > 0 ? JSON.parse(userData.toString('utf8')) : {};
    if (parsed && typeof parsed === 'object') {
      for (const [topic, partitions] of Object.entries(parsed)) {
        if (Array.isArray(partitions)) held[topic] = partitions.filter((p): p is number => typeof p === 'number');
      }
    }
  } catch {
    // Another client's user data (not ours): it holds nothing we know of.
  }
  return { topics, held };
}

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
