import { describe, expect, it } from 'vitest';
import { IterationSigner } from '../../../src/security/iteration-signature.js';
import { agentRequestCodec, makeAgentRequest } from '../../../src/wire/index.js';

const signer = new IterationSigner('a-signing-key-of-some-length');
const request = makeAgentRequest({
  question: 'q',
  group: ['read-only'],
  state: 'analysis',
  history: [{ thought: 't', action: 'knowledge_query', arguments: { question: 'x', limit: '3' }, observation: 'o' }],
});

describe('iteration signatures', () => {
  it('verifies what it signed, also after a wire round trip', () => {
    const signature = signer.sign('id-1', request);
    const decoded = agentRequestCodec.decode(agentRequestCodec.encode(request));
    expect(signer.verify('id-1', decoded, signature)).toBe('ok');
  });

  it('rejects a changed group, state, history or id', () => {
    const signature = signer.sign('id-1', request);
    expect(signer.verify('id-1', { ...request, group: ['*'] }, signature)).toBe('bad');
    expect(signer.verify('id-1', { ...request, state: 'results' }, signature)).toBe('bad');
    expect(signer.verify('id-2', request, signature)).toBe('bad');
    const history = [{ ...request.history[0]!, observation: 'forged' }];
    expect(signer.verify('id-1', { ...request, history }, signature)).toBe('bad');
  });

  it('requires a signature only once a conversation has history', () => {
    expect(signer.verify('id-1', request, undefined)).toBe('missing');
    expect(signer.verify('id-1', { ...request, history: [] }, undefined)).toBe('ok');
  });

  it('does not accept another key', () => {
    const other = new IterationSigner('another-signing-key-entirely');
    expect(signer.verify('id-1', request, other.sign('id-1', request))).toBe('bad');
  });

  it('accepts the previous key during a rotation, but signs with the new one', () => {
    const rotated = new IterationSigner('the-new-signing-key-after-rotation', 'a-signing-key-of-some-length');
    expect(rotated.verify('id-1', request, signer.sign('id-1', request))).toBe('ok');
    expect(rotated.sign('id-1', request)).not.toBe(signer.sign('id-1', request));
    expect(signer.verify('id-1', request, rotated.sign('id-1', request))).toBe('bad');
  });
});
