/**
 * A RabbitMQ cluster of three nodes of Debian's `rabbitmq-server` on this machine (as dev/rabbitmq-broker.ts runs
 * one): distinct node names, AMQP and distribution ports, data directories, one Erlang port mapper of the
 * cluster's own on a free port, and a shared Erlang cookie. The nodes form the cluster through classic peer
 * discovery (each lists all three) and are started one after the other. Clients reach it through a TCP balancer
 * (dev/tcp-balancer.ts) that sends each connection to a live node, as a Service in front of a RabbitMQ cluster does:
 * TrustGraph's RabbitMQ options, and the agent's, name one host.
 *
 * TrustGraph 2.11.1 declares classic queues with no arguments (`request` and `response` ones not durable), so its
 * queues cannot be quorum queues (that takes `x-queue-type: quorum` on the declaration, and durability). What
 * RabbitMQ 3.x allows for such queues is classic mirroring by policy, which changes no declaration: the cluster
 * sets the policy `tg-mirrored` (`^tg\.`: every TrustGraph queue; `ha-mode: all`, `ha-sync-mode: automatic`),
 * so a named queue survives the node holding it. A client's own reply queue (exclusive, auto-delete) lives on
 * its connection's node and goes with it, as the connection does.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { errorMessage } from '../src/errors/error-text.js';
import { ended, NodeProcess, tail, untilListening } from './child-process.js';
import type { BrokerCluster, ClusterNode } from './cluster.js';
import { pollUntil, ProcessClusterNode } from './cluster.js';
import { freePort } from './ports.js';
import { RABBITMQ_SERVER, rabbitMqUnavailable, RabbitMqUnavailableError, TEST_RABBITMQ_MAX_MESSAGE_BYTES } from './rabbitmq-broker.js';
import { startTcpBalancer } from './tcp-balancer.js';

const NODES = 3;
const RABBITMQCTL = '/usr/lib/rabbitmq/bin/rabbitmqctl';
const EPMD = '/usr/bin/epmd';
const START_TIMEOUT_MS = 360_000;
const run = promisify(execFile);

export interface RabbitMqCluster extends BrokerCluster {
  /** `amqp://guest:guest@127.0.0.1:<balancer port>/%2F`. */
  readonly url: string;
  /** The node whose process holds `queue` (its master), among those running. */
  nodeHolding(queue: string): Promise<ClusterNode>;
}

interface RabbitNode extends ClusterNode {
  readonly nodeName: string;
}

export async function startRabbitMqCluster(): Promise<RabbitMqCluster> {
  const missing = rabbitMqUnavailable();
  if (missing) throw new RabbitMqUnavailableError(missing);
  const root = mkdtempSync(join(tmpdir(), 'tg-agent-rabbitmq-cluster-'));
  const epmdPort = await freePort();
  writeFileSync(join(root, '.erlang.cookie'), randomBytes(16).toString('hex').toUpperCase());
  chmodSync(join(root, '.erlang.cookie'), 0o400);
  const shared = { HOME: root, ERL_EPMD_PORT: String(epmdPort) };
  // Under a name of its own: a single node's stop ends the port mappers that appeared while it ran (`pgrep -x epmd`,
  // dev/rabbitmq-broker.ts, in any test run on the machine), and the cluster's nodes cannot lose theirs.
  const epmdCopy = join(root, 'tg-cluster-epmd');
  copyFileSync(realpathSync(EPMD), epmdCopy);
  chmodSync(epmdCopy, 0o755);
  const epmd = spawn(epmdCopy, ['-port', String(epmdPort)], { env: { ...process.env, ...shared }, stdio: ['ignore', 'pipe', 'pipe'] });
  const specs: { i: number; port: number; dist: number; nodeName: string }[] = [];
  for (let i = 1; i <= NODES; i++) specs.push({ i, port: await freePort(), dist: await freePort(), nodeName: `tg-agent-rabbit-${i}-${epmdPort}@localhost` });
  const ctl = (nodeName: string, args: string[]): Promise<string> =>
    run(RABBITMQCTL, ['-n', nodeName, ...args], { env: { ...process.env, ...shared }, timeout: 60_000 }).then((r) => r.stdout);
  const nodes: RabbitNode[] = specs.map(({ i, port, dist, nodeName }) => {
    const dir = join(root, `node-${i}`);
    mkdirSync(dir);
    writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
    writeFileSync(
      join(dir, 'rabbitmq.conf'),
      [
        `listeners.tcp.default = 127.0.0.1:${port}`,
        'loopback_users = none',
        `max_message_size = ${TEST_RABBITMQ_MAX_MESSAGE_BYTES}`,
        'cluster_formation.peer_discovery_backend = classic_config',
        ...specs.map((s) => `cluster_formation.classic_config.nodes.${s.i} = ${s.nodeName}`),
        '',
      ].join('\n'),
    );
    const env = {
      ...process.env,
      ...shared,
      RABBITMQ_NODENAME: nodeName,
      RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
      RABBITMQ_NODE_PORT: String(port),
      RABBITMQ_DIST_PORT: String(dist),
      // The script then execs the Erlang VM, so the child is the node itself and a signal reaches it (dev/rabbitmq-broker.ts).
      RABBITMQ_ALLOW_INPUT: 'true',
      RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '-noinput',
      RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
      RABBITMQ_LOG_BASE: join(dir, 'log'),
      RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq'),
      RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
      RABBITMQ_PID_FILE: join(dir, 'pid'),
    };
    const child = new NodeProcess(() => spawn(RABBITMQ_SERVER, [], { env, stdio: ['ignore', 'pipe', 'pipe'] }), port, nodeName, START_TIMEOUT_MS);
    return Object.assign(new ProcessClusterNode(`rabbit-${i}`, child), { nodeName });
  });
  const anyRunning = (): RabbitNode => {
    const node = nodes.find((n) => n.running);
    if (!node) throw new Error('no node of the RabbitMQ cluster runs');
    return node;
  };
  const balancer = await startTcpBalancer(specs.map((s) => s.port));
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await balancer.close();
    await Promise.all(nodes.map((node) => node.kill('SIGTERM')));
    await ended(epmd, 5000);
    rmSync(root, { recursive: true, force: true });
  };
  const handle: RabbitMqCluster = {
    description: `RabbitMQ cluster of ${NODES} rabbitmq-server nodes (Debian), queues mirrored by the policy tg-mirrored, behind a TCP balancer on 127.0.0.1:${balancer.port}`,
    url: `amqp://guest:guest@127.0.0.1:${balancer.port}/%2F`,
    nodes,
    async nodeHolding(queue) {
      const row = (await queueRows(ctl, anyRunning(), ['pid'])).find((r) => r.name === queue);
      const node = nodes.find((n) => n.nodeName === row?.nodes[0]);
      if (!node) throw new Error(`no running node holds the queue ${queue} (list_queues: ${JSON.stringify(row)})`);
      return node;
    },
    untilServing: (timeoutMs) => pollUntil(() => servingVerdict(nodes, ctl, anyRunning), 'the RabbitMQ cluster to serve again', timeoutMs),
    stop,
  };
  try {
    await untilListening(epmdPort, epmd, 'epmd', 30_000, tail(epmd));
    // One after the other: each joins the nodes already running (classic peer discovery).
    for (const node of nodes) await node.start();
    await ctl(nodes[0]!.nodeName, ['set_policy', 'tg-mirrored', '^tg\\.', '{"ha-mode":"all","ha-sync-mode":"automatic"}', '--apply-to', 'queues']);
    await handle.untilServing(START_TIMEOUT_MS);
  } catch (error) {
    await stop();
    throw new RabbitMqUnavailableError(`the RabbitMQ cluster did not start: ${errorMessage(error)} (logs in ${root}/node-*/log)`, { cause: error });
  }
  return handle;
}

/**
 * True when every running node is in the cluster's running nodes and every mirrored queue has a synchronised
 * mirror on each other running node (what a rolling restart waits for before the next node); else what is missing.
 */
async function servingVerdict(nodes: readonly RabbitNode[], ctl: (node: string, args: string[]) => Promise<string>, anyRunning: () => RabbitNode): Promise<true | string> {
  const running = nodes.filter((n) => n.running).map((n) => n.nodeName);
  const status = JSON.parse(await ctl(anyRunning().nodeName, ['cluster_status', '--formatter', 'json'])) as { running_nodes?: string[] };
  const absent = running.filter((name) => !(status.running_nodes ?? []).includes(name));
  if (absent.length > 0) return `${absent.join(', ')} not running in the cluster yet`;
  for (const queue of await queueRows(ctl, anyRunning(), ['policy', 'pid', 'synchronised_slave_pids'])) {
    if (queue.text[0] !== 'tg-mirrored') continue;
    const unsynced = running.filter((name) => !queue.nodes.includes(name));
    if (unsynced.length > 0) return `${queue.name} has no synchronised copy on ${unsynced.join(', ')}`;
  }
  return true;
}

/**
 * `rabbitmqctl list_queues name <columns>` as rows: the columns' text, and the node names of the Erlang processes
 * they name (`<node@host.1.2.3>`), in order. (Its JSON output gives a process without its node.)
 */
async function queueRows(ctl: (node: string, args: string[]) => Promise<string>, via: RabbitNode, columns: string[]): Promise<{ name: string; text: string[]; nodes: string[] }[]> {
  const out = await ctl(via.nodeName, ['-q', 'list_queues', 'name', ...columns]);
  return out
    .split('\n')
    .filter((line) => line.includes('\t'))
    .map((line) => {
      const [name = '', ...text] = line.split('\t');
      return { name, text, nodes: [...line.matchAll(/<([^<>\s]+@[^<>.\s]+)\.\d+\.\d+\.\d+>/g)].map((m) => m[1]!) };
    });
}
