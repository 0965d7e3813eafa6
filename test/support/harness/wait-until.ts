/** Poll `predicate` every `intervalMs` until it holds; fail naming `what` after `timeoutMs`. */
export async function waitUntil(predicate: () => boolean, what: string, timeoutMs = 10_000, intervalMs = 25): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
