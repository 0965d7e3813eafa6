/**
 * `tg-agent lint`: the workflow linter (src/workflow/workflow-lint.ts) over a workspace's `tool`,
 * `tool-service`, `mcp` and group-policy entries, read from TrustGraph's config service (with the agent's own
 * connection options, or those of the stack `npm run local` runs) or from a file as `tg-show-config` prints it
 * (or that object as JSON or YAML); with `--against`, also what the configuration would change for the
 * conversations recorded in audit logs (lint-against.ts). Text for people, `--json` for machines.
 * Exit status: 0 no errors, 1 an error found (an invalid entry or an error finding; with --fail-on-impact, a
 * used tool taken away or a new dead end), 2 the command could not run (bad option, unreadable file, no
 * config service).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { ConfigClient, parseConfigDump, type TypeValues } from './config/index.js';
import { createTransport } from './create-transport.js';
import { errorMessage } from './errors/index.js';
import { parsePolicy } from './groups/index.js';
import { PATTERN_IDS } from './agent/index.js';
import { loadSettings } from './settings.js';
import { buildRegistry } from './tools/index.js';
import { configImpact, type ConfigImpact, type Finding, impactBreaksUse, lintWorkflow, type RecordedIteration } from './workflow/index.js';
import { formatImpact, readAuditLogs, type AuditRead } from './lint-against.js';
import { localStackArgs, localStackFile, readLocalStack } from './local-stack.js';

export { parseConfigDump } from './config/index.js';

export const LINT_HELP = `Usage: tg-agent lint [--file <dump>] [--against <audit log|dir>] [--workspace <ws>]
                    [--json] [--fail-on-impact] [agent options]
From a checkout: npm run tg-agent -- lint ...

Checks a workspace's tool workflow: invalid entries, keys the agent does not read (did you mean
...?), misspelt groups and states, unreachable states, dead ends, tools the group policy never lets
through, and more (docs/operating.md). With --against, also what the configuration would
change for the conversations recorded in the agent's audit logs.

  --file <dump>      read the config from a file: what tg-show-config prints ("Version: N" and a
                     JSON object of type -> key -> value), or that object as JSON or YAML (values
                     as JSON strings or as objects, e.g. examples/spec-tools.yaml)
  --against <path>   replay the audit records (one per iteration) of this log file or directory
                     (.gz too) through the configuration: per tool and per group, how many recorded
                     iterations would no longer be offered a tool they were offered (and used), and
                     which states would become dead ends for the conversations that reached them
  --fail-on-impact   exit 1 also when a recorded iteration would lose a tool it used, or a state
                     would become a dead end (with --against)
  --workspace <ws>   the workspace (default: every workspace of the config service; "default"
                     with --file)
  --json             one JSON document: per workspace, its entry problems, findings and impact
  agent options      without --file: how to reach the config service, as the agent takes them
                     (--pulsar-host, --transport, --pulsar-ws-url, --config-request-queue, ...);
                     with none, the broker \`npm run local\` runs (.pulsar/local.json), if it runs

Exit status: 0 no errors, 1 errors found (with --fail-on-impact also: a used tool taken away, or a
new dead end), 2 the check could not run.`;

const TYPES = ['tool', 'tool-service', 'mcp'] as const;

export interface WorkspaceReport {
  readonly workspace: string;
  /** Entries left out or partly ignored when loading, as the agent reports them. */
  readonly entryProblems: readonly { severity: string; key: string; message: string }[];
  readonly findings: readonly Finding[];
  /** With --against: what the configuration would change for the recorded iterations of the workspace. */
  readonly impact?: ConfigImpact;
}

/** Lint one workspace's config: `config` maps a config type to its key → value entries. */
export function lintWorkspaceConfig(
  workspace: string,
  config: Readonly<Record<string, TypeValues>>,
  policyConfigType = 'agent-group-policy',
  recorded?: readonly RecordedIteration[],
): WorkspaceReport {
  const { registry, problems } = buildRegistry({
    workspace,
    version: 0,
    tools: config.tool ?? {},
    toolServices: config['tool-service'] ?? {},
    mcpServers: config.mcp ?? {},
  });
  const policy = parsePolicy(workspace, config[policyConfigType] ?? {}, PATTERN_IDS);
  return {
    workspace,
    entryProblems: [
      ...problems.map((p) => ({ severity: p.severity, key: `${p.kind}:${p.key}`, message: p.text })),
      ...policy.problems.map((message) => ({ severity: 'error', key: `${policyConfigType}`, message })),
    ],
    findings: lintWorkflow(registry, policy.policy),
    ...(recorded === undefined ? {} : { impact: configImpact(recorded, registry, policy.policy) }),
  };
}

export function formatReports(reports: readonly WorkspaceReport[], audit?: Pick<AuditRead, 'files'>): string {
  const lines: string[] = [];
  for (const report of reports) {
    const count = (severity: string) =>
      report.entryProblems.filter((p) => p.severity === severity).length + report.findings.filter((f) => f.severity === severity).length;
    lines.push(`workspace ${report.workspace}: ${count('error')} error(s), ${count('warning')} warning(s), ${count('info')} note(s)`);
    for (const p of report.entryProblems) lines.push(`  ${p.severity.padEnd(7)} entry ${p.key}: ${p.message}`);
    for (const f of report.findings) lines.push(`  ${f.severity.padEnd(7)} ${f.check}: ${f.message}`);
    if (report.impact !== undefined) lines.push(formatImpact(report.impact, audit ?? { files: 0 }));
  }
  return lines.join('\n');
}

export const hasErrors = (reports: readonly WorkspaceReport[]): boolean =>
  reports.some((r) => r.entryProblems.some((p) => p.severity === 'error') || r.findings.some((f) => f.severity === 'error'));

const LINT_OPTIONS = {
  file: { type: 'string' },
  against: { type: 'string' },
  'fail-on-impact': { type: 'boolean' },
  workspace: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

interface LintValues {
  file?: string;
  against?: string;
  'fail-on-impact'?: boolean;
  workspace?: string;
  json?: boolean;
  help?: boolean;
}

/** Agent options or environment variables that say where the broker is: with none, `npm run local`'s stack is used. */
const CONNECTION_FLAG = /^-(p|-(pulsar|kafka|rabbitmq|transport|pubsub)).*/;
const CONNECTION_ENV = ['PULSAR_HOST', 'PULSAR_WS_URL', 'PUBSUB_BACKEND', 'TG_AGENT_TRANSPORT', 'KAFKA_BOOTSTRAP_SERVERS', 'RABBITMQ_HOST'];

/**
 * The command's own options, checked, and the rest: the agent's options, passed on as given. parseArgs reads
 * them all leniently (the agent's are unknown to it), then the command's own are parsed again strictly.
 */
function splitArguments(argv: readonly string[]): { values: LintValues; agent: string[] } {
  const { tokens } = parseArgs({ args: [...argv], options: LINT_OPTIONS, strict: false, allowPositionals: true, tokens: true });
  const own = new Set<number>();
  for (const token of tokens) {
    if (token.kind !== 'option' || !Object.hasOwn(LINT_OPTIONS, token.name)) continue;
    own.add(token.index);
    // A value given as the next argument (not `--file=x`) belongs to the option too.
    if (token.value !== undefined && !token.inlineValue) own.add(token.index + 1);
  }
  const mine = argv.filter((_, i) => own.has(i));
  const { values } = parseArgs({ args: mine, options: LINT_OPTIONS, strict: true });
  return { values, agent: argv.filter((_, i) => !own.has(i)) };
}

/** Run the command; resolves with the exit status. */
export async function runLintCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let values: LintValues;
  let agent: string[];
  try {
    ({ values, agent } = splitArguments(argv));
  } catch (error) {
    console.error(`tg-agent lint: ${errorMessage(error)}\n\n${LINT_HELP}`);
    return 2;
  }
  if (values.help) {
    console.log(LINT_HELP);
    return 0;
  }
  let reports: WorkspaceReport[];
  let audit: AuditRead | undefined;
  try {
    audit = values.against === undefined ? undefined : await readAuditLogs(values.against);
    if (values.file !== undefined) {
      const settings = loadSettings(agent, env).settings!;
      const config = parseConfigDump(readFileSync(values.file, 'utf8'));
      reports = [lintWorkspaceConfig(values.workspace ?? 'default', config, settings.policyConfigType, audit?.records)];
    } else {
      reports = await lintFromConfigService(loadSettings(withLocalStack(agent, env), env).settings!, values.workspace, audit?.records);
    }
  } catch (error) {
    console.error(`tg-agent lint: ${errorMessage(error)}`);
    return 2;
  }
  console.log(values.json ? JSON.stringify({ workspaces: reports }, null, 2) : formatReports(reports, audit));
  if (hasErrors(reports)) return 1;
  return values['fail-on-impact'] && reports.some((r) => r.impact !== undefined && impactBreaksUse(r.impact)) ? 1 : 0;
}

/** The agent options, with those reaching `npm run local`'s broker when none says where a broker is and that stack runs. */
export function withLocalStack(agent: string[], env: NodeJS.ProcessEnv): string[] {
  if (agent.some((arg) => CONNECTION_FLAG.test(arg)) || CONNECTION_ENV.some((name) => env[name])) return agent;
  const stack = readLocalStack(env);
  if (stack === undefined) return agent;
  console.error(`tg-agent lint: reading the config service of the stack \`npm run local\` runs (${localStackFile(env)})`);
  return [...localStackArgs(stack), ...agent];
}

async function lintFromConfigService(
  settings: NonNullable<ReturnType<typeof loadSettings>['settings']>,
  only: string | undefined,
  recorded: readonly RecordedIteration[] | undefined,
): Promise<WorkspaceReport[]> {
  const logger = pino({ level: 'warn' }, pino.destination(2));
  const transport = await createTransport(settings, logger);
  const client = new ConfigClient({
    transport,
    requestQueue: settings.configRequestQueue,
    responseQueue: settings.configResponseQueue,
    timeoutMs: settings.configTimeoutSeconds * 1000,
    logger,
  });
  try {
    await client.start();
    const types = [...TYPES, settings.policyConfigType];
    const workspaces = new Set<string>();
    if (only !== undefined) workspaces.add(only);
    else for (const type of types) (await client.workspacesWith(type)).workspaces.forEach((w) => workspaces.add(w));
    const reports: WorkspaceReport[] = [];
    for (const workspace of [...workspaces].sort()) {
      const config = Object.create(null) as Record<string, TypeValues>;
      for (const type of types) config[type] = (await client.values(workspace, type)).values;
      reports.push(lintWorkspaceConfig(workspace, config, settings.policyConfigType, recorded));
    }
    return reports;
  } finally {
    await client.close().catch(() => undefined);
    await transport.close().catch(() => undefined);
  }
}
