/**
 * The linter's check on keys: a key of a tool entry, or of one of its argument declarations, that the agent
 * never reads. TrustGraph keeps such keys without a word, so a misspelling silently changes the workflow:
 * `"groups"` leaves the tool in group "default", `"applicable_state"` offers it in every state, `"next-state"`
 * never moves the conversation, `"requred": false` leaves the argument required. Each finding says which key
 * was most likely meant (key-suggestion.ts); one that silently drops a group or state key is an error.
 * One pass over the tools and their keys.
 */
import { CHEAP_ITEMS_PER_STEP, type Steps } from '../threads/index.js';
import { quote, quoteList, suggestKey } from '../errors/index.js';
import { ARGUMENT_CONFIG_KEYS as ARGUMENT_KEYS, STATES_ALIAS_KEY, STATES_KEY, TOOL_CONFIG_KEYS as TOOL_KEYS, type Tool } from '../tools/index.js';
import { finding, type Finding } from './finding.js';

const STATE_KEYS = { single: 'state', list: STATES_KEY };

/** What the agent does when the key meant is missing: said after the finding. */
const WHEN_MISSING: Readonly<Record<string, string>> = {
  group: 'the tool is in the group "default" (or its MCP server\'s or tool service\'s groups)',
  state: 'the tool never moves the conversation to another state',
  [STATES_KEY]: 'the tool is offered in every state',
  [STATES_ALIAS_KEY]: 'the tool is offered in every state',
  required: 'the argument is required',
};

const shown = (key: string): string => (key === STATES_ALIAS_KEY ? `${quote(STATES_KEY)} (or ${quote(STATES_ALIAS_KEY)})` : quote(key));

/** Every key of a tool entry and of its argument declarations that the agent does not read. */
export function* unknownKeySteps(tools: readonly Tool[], out: Finding[]): Steps<void> {
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i]!;
    if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
    const params = tool.type === 'tool-service' ? tool.service.configParams.map((p) => p.name) : [];
    const known = [...TOOL_KEYS[tool.type], ...params];
    for (const [key, value] of Object.entries(tool.config)) {
      if (known.includes(key)) continue;
      out.push(keyFinding(tool, key, suggestKey(key, value, known, STATE_KEYS), Object.hasOwn(tool.config, STATES_KEY) || Object.hasOwn(tool.config, STATES_ALIAS_KEY)));
    }
    const declared: unknown = tool.config.arguments;
    if (!Array.isArray(declared)) continue;
    for (const argument of declared as unknown[]) {
      if (typeof argument !== 'object' || argument === null) continue;
      const name = (argument as Record<string, unknown>).name;
      for (const key of Object.keys(argument)) {
        if (ARGUMENT_KEYS.includes(key)) continue;
        const meant = suggestKey(key, undefined, ARGUMENT_KEYS);
        const present = meant !== undefined && Object.hasOwn(argument, meant);
        out.push(
          finding(
            meant === 'required' && !present ? 'error' : 'warning',
            'unknown-key',
            `tool ${quote(tool.name)}: argument ${typeof name === 'string' ? quote(name) : '(unnamed)'} has the key ${quote(key)}, which the agent does not read` +
              (meant === undefined ? ` (it reads ${quoteList(ARGUMENT_KEYS)})` : `: did you mean ${quote(meant)}?`) +
              (meant !== undefined && !present && WHEN_MISSING[meant] ? ` Without it, ${WHEN_MISSING[meant]}` : ''),
            { tools: [tool.name] },
          ),
        );
      }
    }
  }
}

function keyFinding(tool: Tool, key: string, meant: string | undefined, hasStateList: boolean): Finding {
  const present = meant !== undefined && (Object.hasOwn(tool.config, meant) || ((meant === STATES_KEY || meant === STATES_ALIAS_KEY) && hasStateList));
  const consequence = meant !== undefined && !present ? WHEN_MISSING[meant] : undefined;
  const readKeys = tool.type === 'tool-service' ? `type "tool-service", service ${quote(tool.service.key)}` : `type ${quote(tool.type)}`;
  return finding(
    consequence !== undefined ? 'error' : 'warning',
    'unknown-key',
    `tool ${quote(tool.name)} has the key ${quote(key)}, which the agent does not read (${readKeys})` +
      (meant === undefined ? ': it is ignored' : `: did you mean ${shown(meant)}?`) +
      (consequence !== undefined ? ` Without it, ${consequence}` : ''),
    { tools: [tool.name] },
  );
}
