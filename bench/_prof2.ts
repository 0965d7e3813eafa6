import { buildRegistry } from '../src/tools/registry.js';
import { ToolLoadCache } from '../src/tools/tool-load-cache.js';
import { syntheticTools } from './support/tools.js';
const N = 10000;
const r1 = syntheticTools(N, 1), r2 = syntheticTools(N, 2);
const one = { ...r1 }; const firstKey = Object.keys(r1).sort()[0]!; one[firstKey] = r2[firstKey]!;
const c = new ToolLoadCache(); buildRegistry({ workspace: 'b', tools: r1, toolServices: {}, version: 1, loadCache: c });
let flip = false;
for (let i = 0; i < 60; i++) { flip = !flip; buildRegistry({ workspace: 'b', tools: flip ? one : r1, toolServices: {}, version: 1, loadCache: c }); }
