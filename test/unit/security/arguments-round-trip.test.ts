/**
 * Whatever the model writes in Args survives signing, the wire and decoding unchanged, so the next iteration's
 * signature check passes: an odd key ("__proto__", "constructor", unicode) is not an attack and must never be
 * counted as one.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringifyArguments } from '../../../src/agent/tool-action.js';
import { IterationSigner } from '../../../src/security/iteration-signature.js';
import { agentRequestCodec, agentRequestOf, agentStepOf, makeAgentRequest } from '../../../src/wire/index.js';
import { propertySeed } from '../../support/fast-check-seed.js';

const route = { workspace: 'ws', flow: 'default', id: 'id-1' };
const ODD_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'é', '日本語', '', ' ', 'a.b', '\u0000'];

/** The model's `Args` text: a JSON object with these entries, parsed as the ReAct parser parses it. */
const modelArgs = fc
  .uniqueArray(fc.tuple(fc.oneof(fc.constantFrom(...ODD_KEYS), fc.string({ unit: 'grapheme' })), fc.jsonValue()), {
    selector: ([key]) => key,
    maxLength: 8,
  })
  .map((entries) => JSON.parse(`{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`) as Record<string, unknown>);

describe('Args through signing and the wire', () => {
  it('round-trip unchanged and verify on the next iteration, for any keys and values', () => {
    fc.assert(
      fc.property(modelArgs, (args) => {
        // A signer per run: one that saw an equal request before would rightly call it a replay.
        const signer = new IterationSigner('a-signing-key-of-some-length');
        const step = agentStepOf({ thought: 't', action: 'tool', arguments: stringifyArguments(args), observation: 'o' });
        const request = agentRequestOf({ ...makeAgentRequest({ question: 'q' }), history: [step] });
        const properties = signer.sign(route, request);
        const decoded = agentRequestCodec.decode(agentRequestCodec.encode(request));
        expect(Object.keys(decoded.history[0]!.arguments)).toEqual(Object.keys(step.arguments));
        expect(decoded.history[0]!.arguments).toStrictEqual(step.arguments);
        expect(signer.verify(route, decoded, properties)).toBe('ok');
      }),
      { ...propertySeed('Args round trip'), numRuns: 300, examples: [[JSON.parse('{"__proto__": "x", "constructor": "y"}')]] },
    );
  });
});
