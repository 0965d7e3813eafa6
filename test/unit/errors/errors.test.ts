import { describe, expect, it } from 'vitest';
import { DialogError, MaxIterationsError, PromptServiceError } from '../../../src/agent/errors.js';
import { ConnectionLostError, NotConnectedError, TopicError, TransportError, UnacknowledgedSendError } from '../../../src/bus/errors.js';
import { ConfigServiceError } from '../../../src/config/errors.js';
import { CodedError } from '../../../src/errors/coded-error.js';
import { clipText, errorMessage } from '../../../src/errors/error-text.js';
import { WireDecodeError } from '../../../src/wire/errors.js';

describe('the error modules', () => {
  it('give every class a stable code and keep the cause', () => {
    const cause = new Error('underneath');
    const errors: [CodedError, string][] = [
      [new TransportError('x', { retriable: true, cause }), 'TG_TRANSPORT'],
      [new NotConnectedError('x'), 'TG_TRANSPORT_NOT_CONNECTED'],
      [new ConnectionLostError('topic', 'id'), 'TG_TRANSPORT_CONNECTION_LOST'],
      [new TopicError('x', { cause }), 'TG_TOPIC_INVALID'],
      [new WireDecodeError('Schema', 'bad', { cause }), 'TG_WIRE_UNDECODABLE'],
      [new ConfigServiceError('x'), 'TG_CONFIG_SERVICE'],
      [new DialogError('x'), 'TG_AGENT_DIALOG'],
      [new MaxIterationsError(), 'TG_AGENT_MAX_ITERATIONS'],
      [new PromptServiceError('x'), 'TG_AGENT_PROMPT_SERVICE'],
      [new UnacknowledgedSendError('x'), 'TG_TRANSPORT_SEND_UNACKNOWLEDGED'],
    ];
    for (const [error, code] of errors) {
      expect(error).toBeInstanceOf(CodedError);
      expect(error.code).toBe(code);
    }
    expect(errors[0]?.[0].cause).toBe(cause);
    expect(errors[3]?.[0].cause).toBe(cause);
    expect(new DialogError('x').cause).toBeUndefined();
  });

  it('let the iteration limit be matched by class, still with TrustGraph’s text', () => {
    const error: unknown = new MaxIterationsError();
    expect(error).toBeInstanceOf(DialogError);
    expect((error as Error).message).toBe('Too many agent iterations');
    expect(new DialogError('Too many agent iterations')).not.toBeInstanceOf(MaxIterationsError);
  });
});

describe('error text', () => {
  it('cuts long text, saying how long it was when asked', () => {
    expect(clipText('abcdef', 6)).toBe('abcdef');
    expect(clipText('abcdefg', 3)).toBe('abc…');
    expect(clipText('abcdefg', 3, { sayLength: true })).toBe('abc… (7 characters)');
  });

  it('takes the message of anything thrown', () => {
    expect(errorMessage(new Error('boom'))).toBe('boom');
    expect(errorMessage('plain')).toBe('plain');
    expect(errorMessage(42)).toBe('42');
  });
});
