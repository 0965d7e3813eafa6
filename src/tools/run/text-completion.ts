/** `text-completion`: the prompt service's `question` template (docs/trustgraph-agent-notes.md §2.4). */
import { makePromptRequest, pythonJsonDumps } from '../../wire/index.js';
import type { TextCompletionTool } from '../tool.js';
import { promptResultText } from './prompt.js';
import { raiseServiceError, required, type ToolClients } from './tool-clients.js';

export async function runTextCompletion(
  tool: TextCompletionTool,
  args: Readonly<Record<string, unknown>>,
  clients: ToolClients,
): Promise<string> {
  const client = required(clients.prompt, 'prompt', tool.type);
  const response = await client.request(
    makePromptRequest({ id: 'question', terms: { question: pythonJsonDumps(args.question ?? '') }, streaming: false }),
  );
  raiseServiceError('prompt', response.error);
  return promptResultText(response);
}
