/**
 * `tg-agent lint`: the workflow linter (src/workflow/workflow-lint.ts) over a workspace's `tool`,
 * `tool-service`, `mcp` and group-policy entries, read from TrustGraph's config service (with the agent's own
 * connection options) or from a file as `tg-show-config` prints it. Text for people, `--json` for machines.
 * Exit status: 0 no errors, 1 an error found (an invalid entry or an error finding), 2 the command could not
 * run (bad option, unreadable file, no config service).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { ConfigClient } from './config/config-client.js';
import { parseConfigDump } from './config/config-dump.js';
import type { TypeValues } from './config/workspace-config.js';
import { createTransport } from './create-transport.js';
import { errorMessage } from './errors/error-text.js';
import { parsePolicy } from './security/group-policy.js';
import { loadSettings } from './settings.js';
import { buildRegistry } from './tools/registry/registry.js';
import { lintWorkflow, type Finding } from './workflow/workflow-lint.js';

export { parseConfigDump } from './config/config-dump.js';

export const LINT_HELP = `Usage: tg-agent lint [--file <dump>] [--workspace <ws>] [--json] [agent options]

Checks a workspace's tool workflow: invalid entries, misspelt groups, unreachable states, dead ends, tools the
group policy never lets through, and more (README: "The operator's view").

  --file <dump>        read the config from a file as tg-show-config prints it ("Version: N" and a JSON
                       object of type -> key -> value), or a plain JSON object of that shape
  --workspace <ws>     the workspace (default: every workspace in the config service; "default" for --file)
  --json               one JSON document: per workspace, its entry problems and findings
  agent options        without --file: how to reach the config service, as the agent takes them
                       (--pulsar-host, --transport, --pulsar-ws-url, --config-request-queue, ...)

Exit status: 0 no errors, 1 errors found, 2 the check could not run.`;

const TYPES = ['tool', 'tool-service', 'mcp'] as const;

export interface WorkspaceReport {
  readonly workspace: string;
  /** Entries left out or partly ignored when loading, as the agent reports them. */
  readonly entryProblems: readonly { severity: string; key: string; message: string }[];
  readonly findings: readonly Finding[];
}

/** Lint one workspace's config: `config` maps a config type to its key → value entries. */
export function lintWorkspaceConfig(workspace: string, config: Readonly<Record<string, TypeValues>>, policyConfigType = 'agent-group-policy'): WorkspaceReport {
  const { registry, problems } = buildRegistry({
    workspace,
    version: 0,
    tools: config.tool ?? {},
    toolServices: config['tool-service'] ?? {},
    mcpServers: config.mcp ?? {},
  });
  const policy = parsePolicy(workspace, config[policyConfigType] ?? {});
  return {
    workspace,
    entryProblems: [
      ...problems.map((p) => ({ severity: p.severity, key: `${p.kind}:${p.key}`, message: p.text })),
      ...policy.problems.map((message) => ({ severity: 'error', key: `${policyConfigType}`, message })),
    ],
    findings: lintWorkflow(registry, policy.policy),
  };
}

export function formatReports(reports: readonly WorkspaceReport[]): string {
  const lines: string[] = [];
  for (const report of reports) {
    const count = (severity: string) =>
      report.entryProblems.filter((p) => p.severity === severity).length + report.findings.filter((f) => f.severity === severity).length;
    lines.push(`workspace ${report.workspace}: ${count('error')} error(s), ${count('warning')} warning(s), ${count('info')} note(s)`);
    for (const p of report.entryProblems) lines.push(`  ${p.severity.padEnd(7)} entry ${p.key}: ${p.message}`);
    for (const f of report.findings) lines.push(`  ${f.severity.padEnd(7)} ${f.check}: ${f.message}`);
  }
  return lines.join('\n');
}

export const hasErrors = (reports: readonly WorkspaceReport[]): boolean =>
  reports.some((r) => r.entryProblems.some((p) => p.severity === 'error') || r.findings.some((f) => f.severity === 'error'));

const LINT_OPTIONS = {
  file: { type: 'string' },
  workspace: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/**
 * The command's own options, checked, and the rest: the agent's options, passed on as given. parseArgs reads
 * them all leniently (the agent's are unknown to it), then the command's own are parsed again strictly.
 */
function splitArguments(argv: readonly string[]): { values: { file?: string; workspace?: string; json?: boolean; help?: boolean }; agent: string[] } {
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
  let values: { file?: string; workspace?: string; json?: boolean; help?: boolean };
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
  try {
    const settings = loadSettings(agent, env).settings!;
    if (values.file !== undefined) {
      const config = parseConfigDump(readFileSync(values.file, 'utf8'));
      reports = [lintWorkspaceConfig(values.workspace ?? 'default', config, settings.policyConfigType)];
    } else {
      reports = await lintFromConfigService(settings, values.workspace);
    }
  } catch (error) {
    console.error(`tg-agent lint: ${errorMessage(error)}`);
    return 2;
  }
  console.log(values.json ? JSON.stringify({ workspaces: reports }, null, 2) : formatReports(reports));
  return hasErrors(reports) ? 1 : 0;
}

async function lintFromConfigService(settings: NonNullable<ReturnType<typeof loadSettings>['settings']>, only: string | undefined): Promise<WorkspaceReport[]> {
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
      reports.push(lintWorkspaceConfig(workspace, config, settings.policyConfigType));
    }
    return reports;
  } finally {
    await client.close().catch(() => undefined);
    await transport.close().catch(() => undefined);
  }
}
