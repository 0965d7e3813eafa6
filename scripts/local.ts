/**
 * `npm run local`: the agent working end to end on this machine, with no TrustGraph cluster.
 *
 * - a local Apache Pulsar broker (tools/pulsar-standalone; or the one at PULSAR_URL),
 * - stand-ins for TrustGraph's config service (holding the spec's §5.1 (docs/requirements.md) tools from examples/spec-tools.yaml
 *   and the `default` flow), prompt service, graph RAG, MCP tool service and librarian (every service the agent
 *   calls for these tools), speaking the real wire format,
 * - the agent itself as a separate process (`src/main.ts`), on TrustGraph's real queue names.
 *
 * The agent and the broker run in process groups of their own, so Ctrl-C in the terminal reaches this script
 * only; it stops them in order: the agent first (it finishes its work, saves its documents), then the
 * stand-ins, then the broker, and says so in one line. Where the stack runs is written to .pulsar/local.json
 * (TG_AGENT_LOCAL_DIR moves it) once the agent is ready, and removed on stop; a second `npm run local` while
 * one runs refuses to start rather than take it over.
 *
 * The prompt service asks the model at LLM_URL (OpenAI-compatible) when set; otherwise a scripted model
 * plays the spec's §5.2 (docs/requirements.md) workflow and says so. Then, in another terminal:
 *   npm run ask -- "What entities are connected to Company X?" --group read-only --state undefined
 *
 * `--transport auto | native | websocket` (default auto: native where the pulsar-client binding loads): the
 * agent and the stand-ins use it; `npm run ask` uses the same unless told otherwise. `--pubsub-backend rabbitmq`
 * runs everything on a local RabbitMQ instead (Debian's rabbitmq-server, or the one at RABBITMQ_URL), and
 * `--pubsub-backend kafka` on a local Kafka (one KRaft node from Maven Central jars, or KAFKA_BOOTSTRAP_SERVERS).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { backendChoice, openTransport, transportChoice } from './transport-choice.js';
import { startLibrarian } from '../dev/stand-ins/librarian.js';
import { localStackDir, localStackFile, readLocalStack } from '../src/local-stack.js';
import { startConfigService, TRUSTGRAPH_CONFIG_QUEUES } from '../dev/stand-ins/config-service.js';
import { startGraphRag } from '../dev/stand-ins/graph-rag.js';
import { startMcpTool } from '../dev/stand-ins/mcp-tool.js';
import { startPromptService, type PromptTerms } from '../dev/stand-ins/prompt-service.js';
import { startBroker } from '../dev/broker.js';
import { startKafka } from '../dev/kafka-broker.js';
import { rabbitMqArgs, startRabbitMq } from '../dev/rabbitmq-broker.js';
import { KafkaTransport } from '../src/bus/kafka/kafka-transport.js';
import { RabbitMqTransport } from '../src/bus/rabbitmq/rabbitmq-transport.js';
import type { Transport } from '../src/bus/transport.js';
import { agentFlowConfig, agentFlowTopics, flowRecordConfig } from '../dev/flow-config.js';
import { openAiModel } from '../dev/local/openai-model.js';
import { scriptedModel, scriptedTemplates } from '../dev/local/scripted-model.js';
import { errorMessage } from '../src/errors/error-text.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STATE_DIR = localStackDir();
const STATE_FILE = localStackFile();
const WORKSPACE = 'default';

const USAGE = `Usage: npm run local [-- options]

Runs the agent end to end on this machine: a local broker, stand-ins for TrustGraph's services
(config, prompt, graph RAG, MCP tools, librarian) holding the spec's example tools
(examples/spec-tools.yaml), and the agent. Then, in another terminal:
  npm run ask -- "What entities are connected to Company X?"
Ctrl-C stops everything. Starting takes a minute or two (the first run downloads the broker).

  --transport <t>        auto | native | websocket (default auto: native where the binding loads)
  --pubsub-backend <b>   pulsar | kafka | rabbitmq (default pulsar)
  -h, --help             print this help

Environment: PULSAR_URL (use that broker), LLM_URL, LLM_MODEL, LLM_API_KEY (a real model,
OpenAI-compatible; else a scripted one), TG_AGENT_METRICS_PORT (the agent's HTTP port; default 8000
when free), TG_AGENT_LOCAL_DIR (where local.json and the agent's log go; default .pulsar).`;

/** The command line, checked: unknown options and stray arguments are refused with the usage. */
function commandLine(): { transport?: string; backend?: string } | undefined {
  try {
    const { values } = parseArgs({
      args: process.argv.slice(2),
      options: { transport: { type: 'string' }, 'pubsub-backend': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    });
    if (values.help) {
      console.log(USAGE);
      process.exit(0);
    }
    return { transport: values.transport, backend: values['pubsub-backend'] };
  } catch (error) {
    console.error(`npm run local: ${errorMessage(error)}\n\n${USAGE}`);
    process.exitCode = 2;
    return undefined;
  }
}

/** Whether the process of this id runs. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
const FLOW = 'default';

function say(message: string): void {
  console.log(`[local] ${message}`);
}

/** Whether nothing listens on the port now (the agent binds 0.0.0.0, so this checks that address). */
function portFree(port: number): Promise<boolean> {
  // A bind that fails emits 'error' only: events.once(server, 'listening') would reject on it, not resolve.
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

/**
 * The agent's HTTP port to ask for: TG_AGENT_METRICS_PORT when set (0: any free port, as the tests use so
 * that runs side by side never collide), else 8000 when free, else any free port.
 */
async function agentPort(): Promise<number> {
  const configured = process.env.TG_AGENT_METRICS_PORT;
  if (configured !== undefined && configured !== '') return Number(configured);
  return (await portFree(8000)) ? 8000 : 0;
}

/** The `httpPort` of the agent's "Agent service started" log line, if this is that line. */
function startedPort(line: string): number | undefined {
  if (!line.includes('"Agent service started"')) return undefined;
  try {
    const port = (JSON.parse(line) as { httpPort?: unknown }).httpPort;
    return typeof port === 'number' ? port : undefined;
  } catch {
    return undefined;
  }
}

/** One line per audit record, so the console shows the workflow as it happens. */
function summarise(line: string): string | undefined {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.trim() || undefined;
  }
  if (record.audit === 'agent-iteration') {
    const transitions = (record.transitions as { from: string; to: string; tool: string }[]).map((t) => `${t.from} → ${t.to}`);
    return (
      `[agent] iteration ${String(record.iteration)} in state "${String(record.initial_state)}", groups ${JSON.stringify(record.effective_groups)}: ` +
      `offered ${JSON.stringify(record.offered_tools)}, action ${JSON.stringify(record.action)}` +
      `${transitions.length ? `, state ${transitions.join(', ')}` : ''} (${String(record.outcome)})`
    );
  }
  // The native Pulsar library's own warnings (its reconnection chatter) stay in the log file; the agent's own
  // warnings, and every error, are shown.
  const threshold = record.component === 'pulsar-client' ? 50 : 40;
  if (typeof record.level === 'number' && record.level >= threshold) return `[agent] ${String(record.msg)}`;
  if (record.msg === 'Agent service started' || record.msg === 'Flow started') return `[agent] ${String(record.msg)}`;
  return undefined;
}

/** Ends a child process group: SIGTERM to the group, and resolves once the child itself has exited. */
async function endGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  try {
    process.kill(-child.pid!, 'SIGTERM');
  } catch {
    child.kill('SIGTERM');
  }
  await exited;
}

async function main(): Promise<void> {
  const flags = commandLine();
  if (flags === undefined) return;
  const other = readLocalStack();
  if (other?.pid !== undefined && other.pid !== process.pid && running(other.pid)) {
    console.error(
      `[local] another npm run local runs already (pid ${other.pid}, ${STATE_FILE}); npm run ask talks to it. ` +
        'Stop it first, or give this one a directory of its own with TG_AGENT_LOCAL_DIR.',
    );
    process.exitCode = 1;
    return;
  }
  mkdirSync(STATE_DIR, { recursive: true });
  let broker: { stop(): Promise<void> } | undefined;
  let agent: ChildProcess | undefined;
  const stoppers: (() => Promise<unknown>)[] = [];
  let stateWritten = false;
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping: the agent, then the stand-ins, then the broker…');
    // Gone first, so that no `npm run ask` reaches a stack that is going away.
    if (stateWritten) rmSync(STATE_FILE, { force: true });
    if (agent) await endGroup(agent);
    for (const stopper of stoppers.reverse()) await stopper().catch(() => undefined);
    await broker?.stop().catch((error: unknown) => say(`the broker did not stop cleanly: ${errorMessage(error)}`));
    say(code === 0 ? 'everything stopped.' : 'everything stopped (after the failure above).');
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  process.on('SIGHUP', () => void stop(0));

  try {
    const backend = backendChoice(flags.backend);
    let transport: Transport;
    let busArgs: string[];
    let busState: Record<string, string>;
    if (backend === 'rabbitmq') {
      say(process.env.RABBITMQ_URL ? 'using the RabbitMQ at RABBITMQ_URL' : "starting a local RabbitMQ (Debian's rabbitmq-server)…");
      const rabbit = await startRabbitMq();
      broker = rabbit;
      say(`broker ready: ${rabbit.description}`);
      transport = new RabbitMqTransport({ url: rabbit.url });
      busArgs = rabbitMqArgs(rabbit.url);
      busState = { backend, rabbitmqUrl: rabbit.url };
    } else if (backend === 'kafka') {
      say(process.env.KAFKA_BOOTSTRAP_SERVERS ? 'using the Kafka at KAFKA_BOOTSTRAP_SERVERS' : 'starting a local Kafka (KRaft, from Maven Central jars; the first run downloads them)…');
      const kafka = await startKafka();
      broker = kafka;
      say(`broker ready: ${kafka.description}`);
      transport = new KafkaTransport({ brokers: [kafka.bootstrapServers] });
      busArgs = ['--pubsub-backend', 'kafka', '--kafka-bootstrap-servers', kafka.bootstrapServers];
      busState = { backend, kafkaBootstrapServers: kafka.bootstrapServers };
    } else {
      say(process.env.PULSAR_URL ? `using the broker at ${process.env.PULSAR_URL}` : 'starting a local Pulsar broker: Docker if an engine answers and has its image, else from Maven Central jars (the first run downloads them)…');
      const pulsar = await startBroker();
      broker = pulsar;
      say(`broker ready: ${pulsar.description}, ${pulsar.webSocketUrl}`);
      transport = await openTransport(transportChoice(flags.transport), pulsar);
      busArgs = ['--transport', transport.kind, '--pulsar-host', pulsar.serviceUrl, '--pulsar-ws-url', pulsar.webSocketUrl];
      busState = { backend, webSocketUrl: pulsar.webSocketUrl, serviceUrl: pulsar.serviceUrl, transport: transport.kind };
    }
    stoppers.push(() => transport.close());
    say(`transport: ${transport.kind} (agent and stand-ins)`);
    await startStandIns(transport, stoppers);

    const metricsPort = await agentPort();
    const logFile = `${STATE_DIR}/local-agent.log`;
    const log = createWriteStream(logFile);
    agent = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...busArgs, '-P', String(metricsPort), '--concurrency', '4'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      // A process group of its own: Ctrl-C reaches this script only, which stops the agent before the broker.
      detached: true,
    });
    const httpPort = followAgent(agent, log);
    agent.on('exit', (code) => {
      if (!stopping) {
        say(`the agent exited with code ${code}; see ${logFile}`);
        void stop(1);
      }
    });

    // As long as the agent runs (its exit stops everything, above): a loaded machine may take minutes.
    const metricsUrl = `http://127.0.0.1:${await httpPort}`;
    for (let waited = 0; ; waited += 500) {
      const readyz = await fetch(`${metricsUrl}/readyz`).then(async (r) => ({ ok: r.ok, text: (await r.text()).trim() }), (e: unknown) => ({ ok: false, text: String(e) }));
      if (readyz.ok) break;
      if (waited > 0 && waited % 30_000 === 0) say(`waiting for the agent to be ready (${readyz.text}); see ${logFile}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    if (stopping) return;
    writeFileSync(STATE_FILE, JSON.stringify({ ...busState, metricsUrl, workspace: WORKSPACE, flow: FLOW, pid: process.pid }, null, 2));
    stateWritten = true;
    say(`agent ready. Metrics: ${metricsUrl}/metrics   tools: ${metricsUrl}/tools/${WORKSPACE}   log: ${logFile}`);
    say('in another terminal try:');
    say('  npm run ask -- "What entities are connected to Company X?" --group read-only --state undefined');
    say('  npm run ask -- "What entities are connected to Company X?" --group read-only,knowledge,advanced,compute,admin');
    say('Ctrl-C stops everything.');
  } catch (error) {
    console.error(`[local] ${errorMessage(error)}`);
    await stop(1);
  }
}

/** The config service with the example's tools, and the services the agent calls for them. */
async function startStandIns(transport: Transport, stoppers: (() => Promise<unknown>)[]): Promise<void> {
  const example = parse(readFileSync(`${ROOT}examples/spec-tools.yaml`, 'utf8')) as {
    tool: Record<string, object>;
    mcp: Record<string, object>;
  };
  const config = await startConfigService({ transport, queues: { ...TRUSTGRAPH_CONFIG_QUEUES } });
  stoppers.push(() => config.stop());
  await config.putMany(WORKSPACE, [
    { type: 'processor:agent-manager', key: FLOW, value: agentFlowConfig(WORKSPACE, FLOW) },
    { type: 'flow', key: FLOW, value: flowRecordConfig(WORKSPACE, FLOW) },
    ...Object.entries(example.tool).map(([key, value]) => ({ type: 'tool', key, value })),
    ...Object.entries(example.mcp).map(([key, value]) => ({ type: 'mcp', key, value })),
  ]);

  const topics = agentFlowTopics(WORKSPACE, FLOW);
  const queues = (service: string) => ({ requestQueue: topics[`${service}-request`]!, responseQueue: topics[`${service}-response`]! });
  const llmUrl = process.env.LLM_URL;
  const model = llmUrl
    ? openAiModel({ url: llmUrl, model: process.env.LLM_MODEL ?? 'gpt-4o-mini', ...(process.env.LLM_API_KEY ? { apiKey: process.env.LLM_API_KEY } : {}) })
    : scriptedModel;
  say(llmUrl ? `model: ${process.env.LLM_MODEL ?? 'gpt-4o-mini'} at ${llmUrl}` : 'model: scripted (plays the spec §5.2 workflow; set LLM_URL for a real one)');
  const prompt = await startPromptService({
    transport,
    ...queues('prompt'),
    script: (terms: PromptTerms) => model(terms),
    templates: {
      question: (terms) => `(text completion stand-in) You asked: ${String(terms.question)}`,
      ...(process.env.LLM_URL ? {} : scriptedTemplates),
    },
  });
  stoppers.push(() => prompt.stop());
  const graphRag = await startGraphRag({
    transport,
    ...queues('graph-rag'),
    answer: () => 'Company X is connected to Acme Corp (supplier) and Globex (partner); Acme Corp also supplies Initech.',
  });
  stoppers.push(() => graphRag.stop());
  const mcp = await startMcpTool({
    transport,
    ...queues('mcp-tool'),
    workspace: WORKSPACE,
    tools: {
      'analysis-server': (params) => ({ object: { clusters: [['Company X', 'Acme Corp', 'Initech'], ['Globex']], input: params } }),
      'workflow-server': () => 'Workflow reset to its initial state',
      'graph-server': (params) => `Updated ${JSON.stringify(params)}`,
    },
  });
  stoppers.push(() => mcp.stop());
  // The agent saves each conversation's explainability documents there.
  const librarian = await startLibrarian({ transport, ...queues('librarian') });
  stoppers.push(() => librarian.stop());
}

/** The agent's output into its log, one console line per audit record; resolves with the port it listens on. */
function followAgent(agent: ChildProcess, log: NodeJS.WritableStream): Promise<number> {
  // The port the agent really listens on, from its start line: with -P 0 only it knows, and whatever answers
  // on a port we merely asked for may be another process (a second `npm run local`, another test run).
  let listening: ((port: number) => void) | undefined;
  const httpPort = new Promise<number>((resolve) => (listening = resolve));
  let buffered = '';
  const onOutput = (chunk: Buffer) => {
    log.write(chunk);
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      const port = startedPort(line);
      if (port !== undefined) listening?.(port);
      const summary = summarise(line);
      if (summary) console.log(summary);
    }
  };
  agent.stdout?.on('data', onOutput);
  agent.stderr?.on('data', onOutput);
  return httpPort;
}

void main();
