/** A RequestClient of the tests' question-and-answer service, its requests and replies JSON. */
import { RequestClient, type RequestClientOptions } from '../../src/bus/request-client.js';
import { jsonCodec } from './json-codec.js';

export interface Ask {
  question: string;
}

/** A client asking `Ask`s and decoding replies as `Answer`; `options` name the bus, topics, timeout and the rest. */
export function askClient<Answer>(options: Omit<RequestClientOptions<Ask, Answer>, 'requestCodec' | 'responseCodec'>): RequestClient<Ask, Answer> {
  return new RequestClient<Ask, Answer>({ ...options, requestCodec: jsonCodec<Ask>('Ask'), responseCodec: jsonCodec<Answer>('Answer') });
}
