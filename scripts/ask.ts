/**
 * `npm run ask -- "question" [--group a,b] [--state s] [--pattern react|plan-then-execute|supervisor] [--no-streaming] [--workspace w] [--flow f]`
 * `npm run ask -- --why "tool name" [--group a,b] [--state s] [--workspace w]`: is that tool offered to such a
 * request, and if not, why (the agent's `/tools/<workspace>?tool=…`, at the URL `npm run local` recorded or TG_AGENT_URL).
 *
 * Sends one AgentRequest the way TrustGraph's gateway does (fresh uuid `id` property, every field present)
 * and prints the streamed thoughts, observations and the answer until `end_of_dialog`. The broker is the one
 * `npm run local` started (its address is in .pulsar/local.json, or in TG_AGENT_LOCAL_DIR), or PULSAR_URL.
 */
import { parseArgs } from 'node:util';
import { RequestClient } from '../src/bus/request-client.js';
import { queueToTopic } from '../src/bus/topics.js';
import { openTransport, transportChoice } from './transport-choice.js';
import { KafkaTransport } from '../src/bus/kafka/kafka-transport.js';
import { RabbitMqTransport } from '../src/bus/rabbitmq/rabbitmq-transport.js';
import { agentRequestCodec, agentResponseCodec, makeAgentRequest, type AgentResponse } from '../src/wire/index.js';
import { errorMessage } from '../src/errors/error-text.js';
import { readLocalStack } from '../src/local-stack.js';

const USAGE = `Usage: npm run ask -- "question" [options]
       npm run ask -- --why "tool name" [--group a,b] [--state s] [--workspace w]

Asks the agent one question the way TrustGraph's gateway does and prints its thoughts, observations
and answer; with --why, asks the running agent whether a tool is offered to such a request, and why
not.
The agent is the one \`npm run local\` runs (.pulsar/local.json), or the broker at PULSAR_URL.

  -g, --group <a,b>         the request's groups (repeatable; default: none, the group "default")
  -s, --state <s>           the conversation's state (default: none, "undefined")
  -p, --pattern <p>         react | plan-then-execute | supervisor (default: the meta-router picks)
      --no-streaming        ask for the answer in one message
  -w, --workspace <w>       default: the one npm run local set up, else "default"
  -f, --flow <f>            default: the one npm run local set up, else "default"
      --transport <t>       auto | native | websocket (default: what npm run local uses)
      --timeout <s>         seconds to wait for the answer (default 120)
  -v, --verbose             also print the explainability events
      --why <tool>          is that tool offered (exit 0) or not (exit 1), and why not
  -h, --help                print this help`;

/** A command line `ask` cannot run: said in one line with the usage, exit status 2. */
class UsageError extends Error {}

/** `--why`: ask the running agent's listing whether the tool is offered to such a request, and print why not. */
async function whyHidden(tool: string, group: string[] | undefined, state: string | undefined, workspaceFlag: string | undefined): Promise<number> {
  const local = readLocalStack() ?? {};
  const base = process.env.TG_AGENT_URL ?? local.metricsUrl ?? 'http://127.0.0.1:8000';
  const workspace = workspaceFlag ?? local.workspace ?? 'default';
  const query = new URLSearchParams({ tool });
  const groups = group?.flatMap((g) => g.split(',')).map((g) => g.trim()).filter((g) => g !== '');
  if (groups !== undefined) query.set('groups', groups.join(','));
  if (state !== undefined) query.set('state', state);
  const headers: Record<string, string> = process.env.TG_AGENT_HTTP_TOKEN ? { authorization: `Bearer ${process.env.TG_AGENT_HTTP_TOKEN}` } : {};
  const response = await fetch(`${base}/tools/${encodeURIComponent(workspace)}?${query}`, { headers }).catch((error: unknown) => {
    throw new Error(`cannot reach the agent at ${base} (${errorMessage(error)}); set TG_AGENT_URL`);
  });
  if (!response.ok) throw new Error(`the agent at ${base} answered ${response.status}: ${(await response.text()).trim()}`);
  const { why } = (await response.json()) as { why: { offered: boolean; groups: string[]; state: string; reasons: { message: string }[] } };
  const request = `groups ${why.groups.join(',') || '(none)'}, state ${why.state}`;
  if (why.offered) {
    console.log(`"${tool}" is offered to a request with ${request}`);
    return 0;
  }
  console.log(`"${tool}" is not offered to a request with ${request}:`);
  for (const reason of why.reasons) console.log(`  - ${reason.message}`);
  return 1;
}

function parseCommandLine() {
  try {
    return parseCommandLineOrThrow();
  } catch (error) {
    throw new UsageError(errorMessage(error));
  }
}

function parseCommandLineOrThrow() {
  return parseArgs({
    allowPositionals: true,
    strict: true,
    options: {
      group: { type: 'string', short: 'g', multiple: true },
      state: { type: 'string', short: 's' },
      pattern: { type: 'string', short: 'p' },
      'no-streaming': { type: 'boolean' },
      workspace: { type: 'string', short: 'w' },
      flow: { type: 'string', short: 'f' },
      transport: { type: 'string' },
      timeout: { type: 'string' },
      verbose: { type: 'boolean', short: 'v' },
      help: { type: 'boolean', short: 'h' },
      why: { type: 'string' },
    },
  });
}

async function main(): Promise<number> {
  const { values, positionals } = parseCommandLine();
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (values.why !== undefined) return whyHidden(values.why, values.group, values.state, values.workspace);
  if (positionals.length === 0) throw new UsageError('no question given');
  const local = readLocalStack() ?? {};
  const url = process.env.PULSAR_URL ?? local.webSocketUrl ?? 'ws://127.0.0.1:8080';
  const serviceUrl = process.env.PULSAR_SERVICE_URL ?? local.serviceUrl ?? `pulsar://${new URL(url).hostname}:6650`;
  const workspace = values.workspace ?? local.workspace ?? 'default';
  const flow = values.flow ?? local.flow ?? 'default';
  const groups = values.group?.flatMap((g) => g.split(',')).map((g) => g.trim()).filter((g) => g !== '');
  const streaming = !values['no-streaming'];

  const rabbitmqUrl = local.backend === 'rabbitmq' && values.transport === undefined ? (process.env.RABBITMQ_URL ?? local.rabbitmqUrl) : undefined;
  const kafkaServers = local.backend === 'kafka' && values.transport === undefined ? (process.env.KAFKA_BOOTSTRAP_SERVERS ?? local.kafkaBootstrapServers) : undefined;
  const transport = rabbitmqUrl
    ? new RabbitMqTransport({ url: rabbitmqUrl })
    : kafkaServers
      ? new KafkaTransport({ brokers: [kafkaServers] })
      : await openTransport(transportChoice(values.transport ?? local.transport), { webSocketUrl: url, serviceUrl });
  const client = new RequestClient({
    transport,
    requestTopic: queueToTopic(`request:tg:agent:${workspace}:${flow}`),
    responseTopic: queueToTopic(`response:tg:agent:${workspace}:${flow}`),
    requestCodec: agentRequestCodec,
    responseCodec: agentResponseCodec,
    timeoutMs: Number(values.timeout ?? 120) * 1000,
  });
  const request = makeAgentRequest({
    question: positionals.join(' '),
    group: groups ?? null,
    state: values.state ?? null,
    streaming,
    // Empty: the agent's meta-router picks the pattern (as `tg-invoke-agent` without `-p`).
    pattern: values.pattern ?? '',
  });
  const broker = rabbitmqUrl ? rabbitmqUrl.replace(/\/\/[^@]*@/, '//') : kafkaServers ? `kafka://${kafkaServers}` : transport.kind === 'native' ? serviceUrl : url;
  console.log(`asking ${broker} over ${transport.kind} (workspace "${workspace}", flow "${flow}", groups ${JSON.stringify(groups ?? null)}, state ${JSON.stringify(values.state ?? null)}, pattern ${JSON.stringify(values.pattern ?? '')}, ${streaming ? 'streaming' : 'not streaming'})\n`);

  let current = '';
  let exitCode = 0;
  // A supervisor's subagents stream on the same id, each under its own session: their lines are labelled.
  const sessions = new Map<string, string>();
  const whose = (messageId: string): string => {
    const session = /^urn:trustgraph:agent:([^/]+)\//.exec(messageId)?.[1];
    if (session === undefined) return '';
    if (!sessions.has(session)) sessions.set(session, sessions.size === 0 ? '' : `[subagent ${sessions.size}] `);
    return sessions.get(session)!;
  };
  const write = (kind: string, messageId: string, text: string, end: boolean) => {
    const key = `${kind}:${messageId}`;
    if (key !== current) {
      if (current) process.stdout.write('\n');
      process.stdout.write(`${whose(messageId)}${kind.padEnd(11)}> `);
      current = key;
    }
    process.stdout.write(text);
    if (end) {
      process.stdout.write('\n');
      current = '';
    }
  };
  try {
    await client.start();
    for await (const response of client.stream(request, { isLast: (r: AgentResponse) => r.end_of_dialog || r.error !== null })) {
      if (response.error) {
        if (current) process.stdout.write('\n');
        console.error(`error      > ${response.error.type}: ${response.error.message}`);
        exitCode = 1;
        break;
      }
      switch (response.message_type) {
        case 'thought':
        case 'observation':
        case 'answer':
          write(response.message_type, response.message_id, response.content, response.end_of_message);
          break;
        case 'explain':
          if (values.verbose) write('explain', response.explain_id ?? '', `${response.explain_id} (${response.explain_triples.length} triples)`, true);
          break;
      }
    }
    if (current) process.stdout.write('\n');
  } catch (error) {
    console.error(`\n${errorMessage(error)}`);
    console.error('Is `npm run local` running (or PULSAR_URL set to a broker with an agent)?');
    exitCode = 1;
  } finally {
    await client.close().catch(() => undefined);
    await transport.close().catch(() => undefined);
  }
  return exitCode;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      console.error(`npm run ask: ${error.message}\n\n${USAGE}`);
      process.exit(2);
    }
    // A broker or agent that cannot be reached: its reason, not a stack trace.
    console.error(`npm run ask: ${errorMessage(error)}`);
    process.exit(1);
  },
);
