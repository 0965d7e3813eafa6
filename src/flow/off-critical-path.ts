/**
 * Work that nobody waits for right now (explainability triples, librarian saves) runs after the current turn
 * of the event loop: the turn's messages that a conversation does wait for — the request to the prompt or tool
 * service, the responses — are written first, and the deferred encoding and writing overlap with their round
 * trips. Deferred work keeps its order (setImmediate callbacks run first in, first out).
 */
export function offCriticalPath<T>(work: () => Promise<T>): Promise<T> {
  return new Promise<void>((resolve) => setImmediate(resolve)).then(work);
}
