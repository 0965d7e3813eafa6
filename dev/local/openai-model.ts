/**
 * The model behind the local run's prompt service when LLM_URL is set: any OpenAI-compatible
 * `/chat/completions` endpoint (OpenAI, vLLM, Ollama, LM Studio, llama.cpp server, ...).
 *   LLM_URL      e.g. http://127.0.0.1:11434/v1
 *   LLM_MODEL    model name (default gpt-4o-mini)
 *   LLM_API_KEY  bearer token, if the endpoint needs one
 */
import { renderReactPrompt } from './react-prompt.js';

export interface OpenAiModelOptions {
  url: string;
  model: string;
  apiKey?: string;
  timeoutMs?: number;
}

export function openAiModel(options: OpenAiModelOptions) {
  const endpoint = `${options.url.replace(/\/+$/, '')}/chat/completions`;
  return async (terms: Record<string, unknown>): Promise<string> => {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
      },
      body: JSON.stringify({
        model: options.model,
        temperature: 0,
        messages: [
          { role: 'system', content: 'Be helpful.' },
          { role: 'user', content: renderReactPrompt(terms) },
        ],
      }),
      signal: AbortSignal.timeout(options.timeoutMs ?? 120_000),
    });
    if (!response.ok) throw new Error(`LLM endpoint ${endpoint} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
    const body = (await response.json()) as { choices?: { message?: { content?: string } }[] };
    const text = body.choices?.[0]?.message?.content;
    if (typeof text !== 'string') throw new Error(`LLM endpoint ${endpoint} returned no choices[0].message.content`);
    return text;
  };
}
