/**
 * The workflow graph as Graphviz DOT (rendered to SVG by @viz-js/viz, Graphviz compiled to WebAssembly, in
 * this process: no outside host) and as Mermaid text (for a wiki or a Markdown file). With a request, its
 * state is drawn bold and the tools it is offered green; everything else it is not offered grey.
 */
import { instance, type Viz } from '@viz-js/viz';
import { ANY_STATE, type WorkflowGraph } from './workflow-graph.js';

const OFFERED = '#1a7f37';
const HIDDEN = '#8c959f';

/**
 * Mermaid label text: quotes, `#`, `%`, `&`, `<`, `>`, backquotes and every control character (line breaks
 * included) as Mermaid's numeric entities (`#37;`), so a name from the config can neither end its label, start a
 * line of its own (a `%%{init: …}%%` directive, a comment, a node), nor carry markup.
 */
const MERMAID_SPECIAL = /["#%&<>`\u0000-\u001f\u007f\u0085\u2028\u2029]/g;
const mermaidText = (value: string): string => value.replace(MERMAID_SPECIAL, (c) => `#${c.codePointAt(0)};`);

/** A DOT string literal. */
const q = (text: string): string => `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;

export function toDot(graph: WorkflowGraph): string {
  const offered = new Set(graph.request?.offered ?? []);
  // Green: offered to the request, where it is now (its state, or any state); grey: everything else.
  const colour = (tool: string, state: string): string =>
    graph.request === undefined ? 'black' : offered.has(tool) && (state === graph.request.state || state === ANY_STATE) ? OFFERED : HIDDEN;
  const lines = [
    `digraph ${q(`workflow ${graph.workspace}`)} {`,
    '  rankdir=LR; node [shape=box, style=rounded, fontname="Helvetica"]; edge [fontname="Helvetica", fontsize=10];',
  ];
  const label = (state: string, title: string, tools: readonly string[]): string =>
    `<<b>${html(title)}</b>${tools.map((t) => `<br/><font point-size="10" color="${colour(t, state)}">${html(t)}</font>`).join('')}>`;
  for (const state of graph.states) {
    const current = graph.request?.state === state.name;
    const attributes = [`label=${label(state.name, state.name, state.tools)}`];
    if (state.initial) attributes.push('peripheries=2');
    if (current) attributes.push('penwidth=3', `color=${q(OFFERED)}`);
    lines.push(`  ${q(state.name)} [${attributes.join(', ')}];`);
  }
  if (graph.anyState.length > 0 || graph.transitions.some((t) => t.from === ANY_STATE)) {
    lines.push(`  ${q(ANY_STATE)} [label=${label(ANY_STATE, 'any state', graph.anyState)}, style="rounded,dashed"];`);
  }
  for (const t of graph.transitions) {
    lines.push(`  ${q(t.from)} -> ${q(t.to)} [label=${q(`${t.tool}\n[${t.groups.join(', ')}]`)}, color=${q(colour(t.tool, t.from))}, fontcolor=${q(colour(t.tool, t.from))}];`);
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

export function toMermaid(graph: WorkflowGraph): string {
  const ids = new Map<string, string>();
  const id = (state: string): string => {
    if (!ids.has(state)) ids.set(state, `s${ids.size}`);
    return ids.get(state)!;
  };
  const text = mermaidText;
  const lines = ['flowchart LR'];
  for (const state of graph.states) {
    const body = [state.name, ...state.tools.map((t) => `· ${t}`)].map(text).join('<br/>');
    lines.push(`  ${id(state.name)}${state.initial ? `(["${body}"])` : `["${body}"]`}`);
  }
  if (graph.anyState.length > 0 || graph.transitions.some((t) => t.from === ANY_STATE)) {
    lines.push(`  ${id(ANY_STATE)}["${['any state', ...graph.anyState.map((t) => `· ${t}`)].map(text).join('<br/>')}"]`);
  }
  for (const t of graph.transitions) lines.push(`  ${id(t.from)} -- "${text(`${t.tool} [${t.groups.join(', ')}]`)}" --> ${id(t.to)}`);
  return `${lines.join('\n')}\n`;
}

let viz: Promise<Viz> | undefined;

export async function toSvg(graph: WorkflowGraph): Promise<string> {
  viz ??= instance();
  return (await viz).renderString(toDot(graph), { format: 'svg' });
}

function html(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
