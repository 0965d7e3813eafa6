/**
 * The one-way rule of src/, as data for dependency-cruiser (https://github.com/sverweij/dependency-cruiser).
 * test/unit/docs/structure.test.ts checks src/ against it on every unit run; `npm run structure` prints what it
 * finds. The folders are layers, lowest first, in the order docs/design.md draws them ("The layers"): a folder
 * imports only folders below it, the root files of src/ compose them all, and no folder imports a root file.
 * Between folders an import goes through the folder's index.ts, its public surface; inside a folder, files
 * import each other directly and never their own index. No two files import each other in a circle, and no two
 * folders at any depth. In src/bus the core is below the backends, which import nothing of each other; in
 * src/agent the iteration is below the orchestrator's helpers, which are below the patterns, which import
 * nothing of each other.
 */

/** The folders of src/, lowest layer first. */
const LAYERS = ['errors', 'retry', 'threads', 'wire', 'bus', 'config', 'groups', 'tools', 'mcp', 'agent', 'flow', 'security', 'observability', 'workflow'];

const ROOT_FILE = '^src/[^/]+\\.ts$';
const INDEX = '/index\\.ts$';

const layerRules = LAYERS.map((folder, at) => ({
  name: `layer-${folder}`,
  comment: `src/${folder} imports only the folders below it: ${LAYERS.slice(0, at).join(', ') || 'none'}`,
  severity: 'error',
  from: { path: `^src/${folder}/` },
  to: { path: `^src/(${LAYERS.slice(at + 1).join('|')})/` },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Two or more files import each other (a split that made pieces depend on each other): give the shared part a file of its own',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-folder-circular',
      comment: 'Two folders import each other: one of them is to be below the other',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...layerRules.filter((rule) => !rule.to.path.endsWith('()/')),
    {
      name: 'root-files-on-top',
      comment: 'The root files of src/ compose the folders; no folder imports them',
      severity: 'error',
      from: { path: '^src/[^/]+/' },
      to: { path: ROOT_FILE },
    },
    {
      name: 'through-the-index',
      comment: "Another folder's files are imported through its index.ts, its public surface",
      severity: 'error',
      from: { path: '^src/([^/]+)/' },
      to: { path: '^src/[^/]+/', pathNot: ['^src/$1/', INDEX] },
    },
    {
      name: 'root-through-the-index',
      comment: "The root files import a folder through its index.ts (or a bus backend's), its public surface",
      severity: 'error',
      from: { path: ROOT_FILE },
      to: { path: '^src/[^/]+/', pathNot: INDEX },
    },
    {
      name: 'not-the-own-index',
      comment: "Inside a folder, files import each other directly; the folder's index.ts is for the others",
      severity: 'error',
      from: { path: '^src/([^/]+)/' },
      to: { path: '^src/$1/index\\.ts$' },
    },
    {
      name: 'bus-core-below-backends',
      comment: 'The bus core (src/bus/*.ts) knows no backend; src/backends.ts lists them',
      severity: 'error',
      from: { path: '^src/bus/[^/]+\\.ts$' },
      to: { path: '^src/bus/[^/]+/' },
    },
    {
      name: 'backends-apart',
      comment: "A backend imports the bus core and its own files, nothing of another backend's",
      severity: 'error',
      from: { path: '^src/bus/([^/]+)/' },
      to: { path: '^src/bus/[^/]+/', pathNot: '^src/bus/$1/' },
    },
    {
      name: 'pulsar-transports-apart',
      comment: "Pulsar's transports share only what src/bus/pulsar holds; its index composes them",
      severity: 'error',
      from: { path: '^src/bus/pulsar/([^/]+)/' },
      to: { path: '^src/bus/pulsar/[^/]+/', pathNot: '^src/bus/pulsar/$1/' },
    },
    {
      name: 'pulsar-shared-below-transports',
      comment: "What Pulsar's transports share does not import them",
      severity: 'error',
      from: { path: '^src/bus/pulsar/[^/]+\\.ts$', pathNot: INDEX },
      to: { path: '^src/bus/pulsar/[^/]+/' },
    },
    {
      name: 'agent-iteration-below',
      comment: 'The iteration (src/agent/*.ts) is below the orchestrator\'s helpers and the patterns',
      severity: 'error',
      from: { path: '^src/agent/[^/]+\\.ts$', pathNot: INDEX },
      to: { path: '^src/agent/(orchestrator|patterns)/' },
    },
    {
      name: 'orchestrator-below-patterns',
      comment: "The orchestrator's helpers (src/agent/orchestrator) are below the patterns",
      severity: 'error',
      from: { path: '^src/agent/orchestrator/' },
      to: { path: '^src/agent/patterns/' },
    },
    {
      name: 'patterns-apart',
      comment: 'A pattern imports no other pattern; only the table and the dispatcher know them all',
      severity: 'error',
      from: { path: '^src/agent/patterns/', pathNot: '(pattern-table|dispatch)\\.ts$' },
      to: { path: '^src/agent/patterns/', pathNot: 'pattern\\.ts$' },
    },
  ],
  options: {
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};

// The layers themselves, for the structure test (which compares them with the drawing in docs/design.md); not
// enumerable, since dependency-cruiser accepts only its own keys in a configuration.
Object.defineProperty(module.exports, 'LAYERS', { value: LAYERS, enumerable: false });
