/**
 * TrustGraph's services as TrustGraph runs them, on its own Python client: each stand-in is a process of the
 * TrustGraph venv (dev/trustgraph-pieces.ts) running dev/trustgraph/service_stand_in.py, which serves one
 * service's queues with trustgraph-base 2.11.1's async backend for the broker (Pulsar, Kafka or RabbitMQ), its
 * ReceiverPool and SenderPool, its schema dataclasses and serialiser. The answers are scripted (`texts`);
 * a fault can leave replies out (`fault`), and the process counts what it received.
 *
 * Faster JavaScript stand-ins (dev/stand-ins/, bench/support/workload.ts) hide what the Python client does under
 * load; these are the services an operator runs.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { RequestClient } from '../src/bus/request-client.js';
import { queueToTopic } from '../src/bus/topics.js';
import type { Transport } from '../src/bus/transport.js';
import { RequestTimeoutError } from '../src/bus/errors.js';
import type { Codec } from '../src/wire/index.js';
import { TRUSTGRAPH_DRIVERS, trustgraphVenv } from './trustgraph-pieces.js';
import { uniqueSuffix } from './flow-config.js';

export type PythonService = 'prompt' | 'graph-rag' | 'mcp-tool' | 'librarian';

/** `answer` every request; `silent`: none; leave out the next n replies, or every n-th. */
export type PythonFault = 'answer' | 'silent' | { readonly 'drop-next': number } | { readonly 'drop-every': number };

export interface PythonStandInSpec {
  service: PythonService;
  requestQueue: string;
  responseQueue: string;
}

export interface PythonStandInOptions {
  /** `pulsar://host:port`, `amqp://user:password@host:port/vhost` or `kafka://host:port`. */
  brokerUrl: string;
  /** The prompt service's answers (an empty history, any other), the MCP tool's and graph RAG's. */
  texts: { action: string; final: string; observation: string; 'graph-rag': string };
  /** Workers of each service's ReceiverPool (TrustGraph's `--concurrency`, default 1). */
  concurrency?: number;
}

export interface PythonStandIn {
  readonly service: PythonService;
  readonly pid: number | undefined;
  fault(fault: PythonFault): Promise<void>;
  /** Requests received (probes included) and replies left out so far. */
  counts(): Promise<{ received: number; dropped: number }>;
  /** Sends probe requests on `transport` until the service answers one (a Kafka consumer group takes a while to join). */
  waitAnswering(transport: Transport, timeoutMs?: number): Promise<void>;
  /** What the process wrote on stderr (TrustGraph logs there). */
  output(): string;
  stop(): Promise<void>;
}

const PROBES: Record<PythonService, object> = {
  prompt: { id: 'probe', terms: { history: '[]' }, streaming: false },
  'graph-rag': { query: 'probe' },
  'mcp-tool': { name: 'probe', parameters: '{}' },
  librarian: { operation: 'probe' },
};

const rawCodec: Codec<Buffer> = { name: 'raw', encode: (value) => value, decode: (payload) => Buffer.from(payload) };

interface Reply {
  ready?: boolean;
  counts?: { received: number; dropped: number };
  fault?: unknown;
  error?: string;
}

/** Starts one service's stand-in and waits until it has subscribed. */
export async function startPythonStandIn(spec: PythonStandInSpec, options: PythonStandInOptions): Promise<PythonStandIn> {
  const venv = await trustgraphVenv();
  const config = {
    service: spec.service,
    request: spec.requestQueue,
    response: spec.responseQueue,
    subscription: `python-${spec.service}-${uniqueSuffix(4)}`,
    concurrency: options.concurrency ?? 1,
    texts: options.texts,
  };
  const child = spawn(join(venv, 'bin', 'python'), [join(TRUSTGRAPH_DRIVERS, 'service_stand_in.py'), options.brokerUrl, JSON.stringify(config)], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const replies: ((reply: Reply) => void)[] = [];
  const ready = new Promise<void>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      // The Pulsar client's C++ logger writes to stdout too (a reconnect's errors): keep it with the log.
      const reply = replyIn(line);
      if (!reply) stderr = (stderr + line + '\n').slice(-20_000);
      else if (reply.ready) resolve();
      else replies.shift()?.(reply);
    });
    void exited.then(() => reject(new Error(`the ${spec.service} stand-in exited before it was ready:\n${stderr}`)));
  });
  const ask = (command: object): Promise<Reply> =>
    new Promise((resolve, reject) => {
      replies.push((reply) => (reply.error ? reject(new Error(`${spec.service} stand-in: ${reply.error}`)) : resolve(reply)));
      child.stdin.write(`${JSON.stringify(command)}\n`);
    });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin.end();
    const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(killer);
  };
  try {
    await timeLimit(ready, 120_000, () => `the ${spec.service} stand-in did not subscribe within 120 s:\n${stderr}`);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    service: spec.service,
    pid: child.pid,
    fault: async (fault) => void (await ask({ fault })),
    counts: async () => (await ask({ counts: true })).counts ?? { received: 0, dropped: 0 },
    waitAnswering: (transport, timeoutMs = 120_000) => probeUntilAnswered(transport, spec, timeoutMs, () => stderr),
    output: () => stderr,
    stop,
  };
}

async function probeUntilAnswered(transport: Transport, spec: PythonStandInSpec, timeoutMs: number, output: () => string): Promise<void> {
  const client = new RequestClient({
    transport,
    requestTopic: queueToTopic(spec.requestQueue),
    responseTopic: queueToTopic(spec.responseQueue),
    requestCodec: rawCodec,
    responseCodec: rawCodec,
    timeoutMs: 2_000,
  });
  const deadline = performance.now() + timeoutMs;
  try {
    for (;;) {
      try {
        await client.request(Buffer.from(JSON.stringify(PROBES[spec.service])));
        return;
      } catch (error) {
        if (!(error instanceof RequestTimeoutError) || performance.now() > deadline) {
          throw new Error(`the ${spec.service} stand-in answered no probe within ${timeoutMs} ms:\n${output()}`, { cause: error });
        }
      }
    }
  } finally {
    await client.close();
  }
}

/** One of the stand-in's own answer lines, or undefined for anything else written on stdout. */
function replyIn(line: string): Reply | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as Reply;
  } catch {
    return undefined;
  }
}

function timeLimit<T>(promise: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message())), ms)));
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/** The broker URL a Python stand-in takes for a broker address of the benchmarks and tests. */
export function pythonBrokerUrl(address: { serviceUrl?: string; kafkaBootstrapServers?: string; rabbitmqUrl?: string }, backend: 'pulsar' | 'kafka' | 'rabbitmq'): string {
  const url = backend === 'kafka' ? address.kafkaBootstrapServers && `kafka://${address.kafkaBootstrapServers}` : backend === 'rabbitmq' ? address.rabbitmqUrl : address.serviceUrl;
  if (!url) throw new Error(`a Python stand-in on ${backend} needs that broker's address`);
  return url;
}
