/**
 * `tg-agent --help`: the options grouped by what an operator looks for (connection, TrustGraph, groups and
 * policy, reliability, observability), each with its environment variable on a line of its own, every line
 * wrapped at 100 columns.
 */
import type { OptionSpec } from './bus/index.js';

export const HELP_WIDTH = 100;

/** The sections of --help, in order, each with the flags it lists (every option is in exactly one). */
export const HELP_SECTIONS: readonly { readonly title: string; readonly flags: readonly string[] }[] = [
  {
    title: 'Connection (broker)',
    flags: [
      'pubsub-backend', 'transport', 'pulsar-host', 'pulsar-ws-url', 'pulsar-api-key', 'pulsar-tls-trust-certs', 'pulsar-listener',
      'rabbitmq-host', 'rabbitmq-port', 'rabbitmq-username', 'rabbitmq-password', 'rabbitmq-vhost',
      'kafka-bootstrap-servers', 'kafka-security-protocol', 'kafka-sasl-mechanism', 'kafka-sasl-username', 'kafka-sasl-password', 'kafka-max-message-bytes',
    ],
  },
  {
    title: 'TrustGraph (config and services)',
    flags: [
      'id', 'config-request-queue', 'config-response-queue', 'config-push-queue', 'config-timeout', 'config-type', 'max-iterations',
      'request-timeout', 'prompt-timeout', 'stream-gap-timeout', 'service-timeouts', 'librarian-timeout', 'librarian-max-in-flight',
      'service-max-in-flight', 'mcp-discovery', 'mcp-discovery-ttl', 'mcp-discovery-timeout',
    ],
  },
  {
    title: 'Groups and policy',
    flags: ['policy-config-type', 'strict-tools', 'strict-states', 'undeclared-arguments', 'signing-key', 'signing-key-previous', 'signing-max-age', 'replay-memory'],
  },
  {
    title: 'Reliability and load',
    flags: [
      'concurrency', 'max-queued', 'max-queued-bytes', 'max-request-bytes', 'request-consumers', 'next-on-bus', 'aggregation-topic',
      'aggregation-timeout', 'broker-ping-timeout', 'slots-held-timeout', 'shutdown-grace',
      'hedge-budget', 'hedge-quantile', 'hedge-factor', 'hedge-floor', 'hedge-ceiling',
    ],
  },
  {
    title: 'Observability (HTTP, metrics, logs, audit)',
    flags: [
      'metrics', 'metrics-port', 'http-host', 'http-token', 'log-level', 'audit-topic', 'broker-admin-url', 'pulsar-admin-url',
      'loki-enabled', 'loki-url', 'loki-username', 'loki-password',
    ],
  },
];

const INDENT = ' '.repeat(8);

/** `text` in lines of at most `width` columns, each starting with `indent` (a word longer than a line stays whole). */
export function wrap(text: string, width: number, indent: string): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (line !== '' && line.length + 1 + word.length <= width) line += ` ${word}`;
    else {
      if (line !== '') lines.push(line);
      line = indent + word;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

function optionLines(option: OptionSpec): string[] {
  const flag = `  ${option.short ? `-${option.short}, ` : '    '}--${option.flag}${option.boolean ? '' : ' <value>'}`;
  const env = option.env ? `  [${option.env}]` : '';
  return [flag + env, ...wrap(option.help, HELP_WIDTH, INDENT)];
}

/** The whole --help text. */
export function groupedHelp(options: readonly OptionSpec[]): string {
  const byFlag = new Map(options.map((option) => [option.flag, option]));
  const lines = [
    'Usage: tg-agent [options]        run the agent',
    '       tg-agent lint [options]   check a tool configuration, and what a change would do (--help)',
    '',
    'Each option may also be given by the environment variable in brackets, or in a YAML file',
    '(--config-file).',
  ];
  for (const section of HELP_SECTIONS) {
    lines.push('', `${section.title}:`);
    for (const flag of section.flags) {
      const option = byFlag.get(flag);
      if (option !== undefined) lines.push(...optionLines(option));
    }
  }
  lines.push('', 'General:');
  lines.push('  -c, --config-file <file>  [TG_AGENT_CONFIG_FILE]', `${INDENT}YAML file with any of the options above (camelCase or flag names)`);
  lines.push('  -h, --help', `${INDENT}print this help`);
  return lines.join('\n');
}
