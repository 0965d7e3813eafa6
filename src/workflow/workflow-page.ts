/**
 * `/workflow/<workspace>`: the workflow picture as a page served by the agent itself (no script, no outside
 * host): the SVG, a form "groups, state" that draws what such a request is offered, and links to the same
 * picture as SVG, DOT, Mermaid and JSON.
 */
import type { WorkflowGraph } from './workflow-graph.js';
import { toDot, toMermaid, toSvg } from './workflow-text.js';

export type WorkflowFormat = 'html' | 'svg' | 'dot' | 'mmd' | 'json';

export interface Rendered {
  readonly contentType: string;
  readonly body: string;
}

const escape = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export async function renderWorkflow(graph: WorkflowGraph, format: WorkflowFormat, query: URLSearchParams): Promise<Rendered> {
  switch (format) {
    case 'svg':
      return { contentType: 'image/svg+xml', body: await toSvg(graph) };
    case 'dot':
      return { contentType: 'text/vnd.graphviz; charset=utf-8', body: toDot(graph) };
    case 'mmd':
      return { contentType: 'text/plain; charset=utf-8', body: toMermaid(graph) };
    case 'json':
      return { contentType: 'application/json', body: `${JSON.stringify(graph, null, 2)}\n` };
    case 'html':
      return { contentType: 'text/html; charset=utf-8', body: await page(graph, query) };
  }
}

async function page(graph: WorkflowGraph, query: URLSearchParams): Promise<string> {
  const base = encodeURIComponent(graph.workspace);
  const search = query.toString() ? `?${escape(query.toString())}` : '';
  const offered = graph.request
    ? `<p id="offered">A request with groups <b>${escape(graph.request.groups.join(', ') || '(none)')}</b> in state <b>${escape(graph.request.state)}</b> is offered: ` +
      `${graph.request.offered.length === 0 ? '<b>no tool</b>' : graph.request.offered.map((t) => `<b class="tool">${escape(t)}</b>`).join(', ')} (green in the picture).</p>`
    : '<p id="offered">Give groups and a state to see what such a request is offered.</p>';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Workflow of ${escape(graph.workspace)}</title>
<style>body{font-family:Helvetica,Arial,sans-serif;margin:1.5em}form{margin:1em 0}input{margin-right:1em}svg{max-width:100%;height:auto}</style>
</head><body>
<h1>Workflow of workspace ${escape(graph.workspace)}</h1>
<p>States are boxes (double border: initial), with the tools available there; an arrow is a tool that moves the conversation to another state, with its groups.</p>
<form method="get" action="${base}">
<label>groups <input name="groups" value="${escape(query.get('groups') ?? '')}" placeholder="read-only,admin"></label>
<label>state <input name="state" value="${escape(query.get('state') ?? '')}" placeholder="undefined"></label>
<button type="submit">show what it is offered</button>
</form>
${offered}
<div id="picture">${inline(await toSvg(graph))}</div>
<p>The same: <a href="${base}.svg${search}">SVG</a> · <a href="${base}.dot${search}">DOT</a> · <a href="${base}.mmd">Mermaid</a> · <a href="${base}.json${search}">JSON</a></p>
</body></html>
`;
}

/** The SVG element alone (no XML declaration, doctype or comments), to sit inside the page. */
function inline(svg: string): string {
  return svg.slice(svg.indexOf('<svg'));
}
