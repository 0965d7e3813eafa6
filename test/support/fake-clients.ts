/**
 * Request clients that answer from a function, for unit tests of code that only calls `request()` and
 * `stream()` (the iteration, the tool runners): no bus, every request recorded. A reply list is the stream's
 * messages (`request()` takes the first); a function that throws makes the call fail with that error.
 */
import type { RequestClient } from '../../src/bus/request-client.js';

export type FakeAnswer<Req, Res> = (request: Req) => Res | readonly Res[] | Promise<Res | readonly Res[]>;

export type FakeClient<Req, Res> = RequestClient<Req, Res> & { readonly calls: Req[] };

export function fakeClient<Req, Res>(answer: FakeAnswer<Req, Res>): FakeClient<Req, Res> {
  const calls: Req[] = [];
  const replies = async (request: Req): Promise<readonly Res[]> => {
    calls.push(request);
    const value = await answer(request);
    return Array.isArray(value) ? (value as readonly Res[]) : [value as Res];
  };
  const fake = {
    calls,
    async request(request: Req): Promise<Res> {
      const [first] = await replies(request);
      if (first === undefined) throw new Error('fake client: the answer function gave no reply');
      return first;
    },
    async *stream(request: Req): AsyncGenerator<Res, void, undefined> {
      yield* await replies(request);
    },
  };
  // Only request() and stream() are used by the code under test; the class's bus plumbing is not needed.
  return fake as unknown as FakeClient<Req, Res>;
}
