/** `prompt`: the tool's prompt template, with the model's arguments as its terms (docs/trustgraph-agent-notes.md §2.4). */
import { makePromptRequest, pythonJsonDumps, type PromptResponse } from '../../wire/index.js';
import type { PromptTool } from '../tool.js';
import { raiseServiceError, required, type ToolClients } from './tool-clients.js';

export async function runPrompt(
  tool: PromptTool,
  args: Readonly<Record<string, unknown>>,
  clients: ToolClients,
): Promise<string> {
  const client = required(clients.prompt, 'prompt', tool.type);
  const terms = Object.fromEntries(Object.entries(args).map(([name, value]) => [name, pythonJsonDumps(value)]));
  const response = await client.request(makePromptRequest({ id: tool.template, terms, streaming: false }));
  raiseServiceError('prompt', response.error);
  return promptResultText(response);
}

/**
 * The text of a prompt reply. A JSON-typed template answers in `object`; TrustGraph then observes the
 * string "None", we observe the JSON itself.
 */
export function promptResultText(response: PromptResponse): string {
  return response.text || response.object;
}
