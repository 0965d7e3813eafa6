/** Resolves in a macrotask of its own (after pending I/O callbacks and timers), so work after it does not add to the current one. */
export function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
