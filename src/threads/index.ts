/**
 * Work kept off the event loop: one long-lived worker thread per kind of decoding (`WorkerClient` calling,
 * `serveCalls` answering), and long builds cut into time slices (`runInSlices`).
 */
export { nextMacrotask } from './next-macrotask.js';
export { serveCalls } from './serve-calls.js';
export { CHEAP_ITEMS_PER_STEP, runInSlices, runToEnd, type Steps, whileCurrent } from './time-slices.js';
export { siblingModule, WorkerClient } from './worker-client.js';
