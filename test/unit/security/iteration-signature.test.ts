import { describe, expect, it } from 'vitest';
import { IterationSigner, LISTENING_SKEW_MS, SIGNATURE_PROPERTY, SIGNED_AT_PROPERTY, type IterationRoute } from '../../../src/security/iteration-signature.js';
import { agentRequestCodec, makeAgentRequest, type AgentRequest } from '../../../src/wire/index.js';

const KEY = 'a-signing-key-of-some-length';
const route: IterationRoute = { workspace: 'ws', flow: 'default', id: 'id-1' };
const request = makeAgentRequest({
  question: 'q',
  group: ['read-only'],
  state: 'analysis',
  collection: 'c1',
  streaming: false,
  session_id: 's-1',
  history: [
    {
      thought: 't',
      action: 'knowledge_query',
      arguments: { question: 'x', limit: '3' },
      observation: 'o',
      step_type: 'react',
      plan: [{ goal: 'g', tool_hint: 'h', depends_on: [1], status: 'pending', result: '' }],
      subagent_results: { a: 'b' },
    },
  ],
});

/** A signer on a clock the test moves. */
function clocked(start = 1_700_000_000_000, options: { maxAgeMs?: number; previousKey?: string; key?: string } = {}) {
  const clock = { now: start };
  const signer = new IterationSigner(options.key ?? KEY, { ...options, now: () => clock.now });
  return { signer, clock };
}

describe('iteration signatures', () => {
  it('verifies what it signed, also after a wire round trip with every field set', () => {
    const { signer } = clocked();
    const properties = signer.sign(route, request);
    expect(properties[SIGNATURE_PROPERTY]).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(properties[SIGNED_AT_PROPERTY]).toMatch(/^\d+$/);
    const decoded = agentRequestCodec.decode(agentRequestCodec.encode(request));
    expect(signer.verify(route, decoded, properties)).toBe('ok');
  });

  it('rejects any changed field of the request, and a changed workspace, flow, id or signing time', () => {
    const tampered: [string, AgentRequest][] = [
      ['group', { ...request, group: ['*'] }],
      ['state', { ...request, state: 'results' }],
      ['question', { ...request, question: 'another question' }],
      ['collection', { ...request, collection: 'other' }],
      ['streaming', { ...request, streaming: true }],
      ['session_id', { ...request, session_id: 's-2' }],
      ['observation', { ...request, history: [{ ...request.history[0]!, observation: 'forged' }] }],
      ['step_type', { ...request, history: [{ ...request.history[0]!, step_type: 'plan' }] }],
      ['plan', { ...request, history: [{ ...request.history[0]!, plan: [] }] }],
      ['subagent_results', { ...request, history: [{ ...request.history[0]!, subagent_results: { a: 'c' } }] }],
      ['pattern', { ...request, pattern: 'supervisor' }],
    ];
    for (const [field, changed] of tampered) {
      const { signer } = clocked();
      const properties = signer.sign(route, request);
      expect(signer.verify(route, changed, properties), field).toBe('bad');
    }
    for (const moved of [{ ...route, workspace: 'other' }, { ...route, flow: 'other' }, { ...route, id: 'id-2' }]) {
      const { signer } = clocked();
      expect(signer.verify(moved, request, signer.sign(route, request))).toBe('bad');
    }
    const { signer } = clocked();
    const properties = signer.sign(route, request);
    const at = Number(properties[SIGNED_AT_PROPERTY]);
    expect(signer.verify(route, request, { ...properties, [SIGNED_AT_PROPERTY]: String(at + 1000) })).toBe('bad');
    expect(signer.verify(route, request, { [SIGNATURE_PROPERTY]: properties[SIGNATURE_PROPERTY] })).toBe('bad');
  });

  it('requires a signature only once a conversation has history', () => {
    const { signer } = clocked();
    expect(signer.verify(route, request, {})).toBe('missing');
    expect(signer.verify(route, { ...request, history: [] }, {})).toBe('ok');
  });

  it("requires one on a subagent's first request too: it continues its supervisor's conversation", () => {
    const { signer } = clocked();
    const subagent: AgentRequest = { ...request, history: [], correlation_id: 'corr-1', subagent_goal: 'g', expected_siblings: 2 };
    expect(signer.verify(route, subagent, {})).toBe('missing');
    expect(signer.verify(route, subagent, signer.sign(route, subagent))).toBe('ok');
    expect(signer.verify(route, { ...subagent, group: ['read-only', 'admin'] }, signer.sign(route, subagent))).toBe('bad');
  });

  it('refuses a signature older than the age limit, or from too far in the future', () => {
    const { signer, clock } = clocked(1_700_000_000_000, { maxAgeMs: 60_000 });
    const fresh = signer.sign(route, request);
    clock.now += 60_001;
    expect(signer.verify(route, request, fresh)).toBe('stale');
    const future = signer.sign(route, request);
    clock.now -= 120_000;
    expect(signer.verify(route, request, future)).toBe('stale');
  });

  it('refuses the second copy of a signed iteration on the same replica', () => {
    const { signer, clock } = clocked();
    const properties = signer.sign(route, request);
    expect(signer.verify(route, request, properties)).toBe('ok');
    clock.now += 1000;
    expect(signer.verify(route, request, properties)).toBe('replayed');
  });

  it('checks a held aggregation message without a replay memory: always signed, by a key held here, within its own age', () => {
    const { signer, clock } = clocked();
    const first = makeAgentRequest({ question: 'q', correlation_id: 'c' });
    const properties = signer.sign(route, first);
    expect(signer.verifyHeld(route, first, properties, 5_000)).toEqual({ verdict: 'ok', signedAt: clock.now });
    // Redelivered: still fine (the fan-in drops duplicates itself).
    expect(signer.verifyHeld(route, first, properties, 5_000).verdict).toBe('ok');
    expect(signer.verifyHeld(route, first, {}, 5_000).verdict).toBe('missing');
    expect(signer.verifyHeld({ ...route, id: 'victim' }, first, properties, 5_000).verdict).toBe('bad');
    expect(signer.verifyHeld(route, makeAgentRequest({ ...first, group: ['admin'] }), properties, 5_000).verdict).toBe('bad');
    clock.now += 5_001;
    expect(signer.verifyHeld(route, first, properties, 5_000).verdict).toBe('stale');
  });

  it('does not accept another key', () => {
    const { signer } = clocked();
    const other = clocked(1_700_000_000_000, { key: 'another-signing-key-entirely' }).signer;
    expect(signer.verify(route, request, other.sign(route, request))).toBe('bad');
  });

  it('accepts the previous key during a rotation, but signs with the new one', () => {
    const old = clocked().signer;
    const rotated = clocked(1_700_000_000_000, { key: 'the-new-signing-key-after-rotation', previousKey: KEY }).signer;
    expect(rotated.verify(route, request, old.sign(route, request))).toBe('ok');
    const signedByRotated = rotated.sign(route, request);
    expect(signedByRotated[SIGNATURE_PROPERTY]).not.toBe(old.sign(route, request)[SIGNATURE_PROPERTY]);
    expect(clocked().signer.verify(route, request, signedByRotated)).toBe('bad');
  });

  it('refuses, on a non-persistent topic, a signature from before the replica listened (beyond the clock margin); a persistent backlog is genuine', () => {
    const earlier = clocked();
    const captured = earlier.signer.sign(route, request);
    // A new process (a restart, a scale-out) begins listening a minute later: it remembers nothing of before.
    const { signer, clock } = clocked(1_700_000_060_000);
    signer.listeningSince(clock.now);
    expect(signer.verify(route, request, captured)).toBe('replayed');
    expect(signer.verify(route, request, captured, { persistent: true })).toBe('ok');
    // Signed within the margin before it listened (another replica's clock a little behind): taken as new.
    const justBefore = clocked(clock.now - LISTENING_SKEW_MS + 1).signer.sign({ ...route, id: 'id-2' }, request);
    expect(signer.verify({ ...route, id: 'id-2' }, request, justBefore)).toBe('ok');
    // With a margin for a publish retried through a broker outage, one signed 30 s before is still new.
    const patient = new IterationSigner(KEY, { now: () => clock.now, listeningMarginMs: 65_000 });
    patient.listeningSince(clock.now);
    const delayed = clocked(clock.now - 30_000).signer.sign({ ...route, id: 'id-3' }, request);
    expect(patient.verify({ ...route, id: 'id-3' }, request, delayed)).toBe('ok');
    const older = clocked(clock.now - 90_000).signer.sign({ ...route, id: 'id-4' }, request);
    expect(patient.verify({ ...route, id: 'id-4' }, request, older)).toBe('replayed');
  });

  it("tells what it accepted, and refuses a copy of what another replica accepted (the ledger's record)", () => {
    const { signer } = clocked();
    const accepted: string[] = [];
    signer.onAccepted = (signature) => void accepted.push(signature);
    const properties = signer.sign(route, request);
    expect(signer.verify(route, request, properties)).toBe('ok');
    expect(accepted).toEqual([properties[SIGNATURE_PROPERTY]]);

    const other = clocked().signer;
    const record = { signature: properties[SIGNATURE_PROPERTY]!, expiresAt: Number(properties[SIGNED_AT_PROPERTY]) + other.maxAgeMs };
    const mac = signer.signSeen(record.signature, record.expiresAt);
    // A record written without the key, or with its expiry moved, is not believed.
    const foreign = clocked(0, { key: 'not-the-signing-key-at-all' }).signer.signSeen(record.signature, record.expiresAt);
    expect(other.acceptSeen(record.signature, record.expiresAt, foreign)).toBe('forged');
    expect(other.acceptSeen(record.signature, record.expiresAt - 1, mac)).toBe('forged');
    expect(other.verify(route, request, properties)).toBe('ok');
    const third = clocked().signer;
    expect(third.acceptSeen(record.signature, record.expiresAt, mac)).toBeUndefined();
    expect(third.verify(route, request, properties)).toBe('replayed');
  });

  it('refuses ledger records that are expired or expire further ahead than the age limit allows, and never stores them', () => {
    const { signer, clock } = clocked();
    const keyHolder = clocked().signer;
    const record = (signature: string, expiresAt: number) => [signature, expiresAt, keyHolder.signSeen(signature, expiresAt)] as const;
    expect(signer.acceptSeen(...record('old', clock.now))).toBe('expired');
    expect(signer.acceptSeen(...record('older', clock.now - 86_400_000))).toBe('expired');
    expect(signer.acceptSeen(...record('far-ahead', clock.now + signer.maxAgeMs + 31_000))).toBe('not-yet-valid');
    // A record of a replica whose clock is a little ahead is taken.
    expect(signer.acceptSeen(...record('ahead', clock.now + signer.maxAgeMs + 20_000))).toBeUndefined();
  });

  it('a flood of collected genuine records that have expired never lets a captured next run again', () => {
    const { signer, clock } = clocked(1_700_000_000_000, { maxAgeMs: 600_000 });
    const small = new IterationSigner(KEY, { now: () => clock.now, replayCacheSize: 1_000 });
    const captured = signer.sign(route, request);
    expect(small.verify(route, request, captured)).toBe('ok');
    clock.now += 1_000;
    // A day of genuine records, all past their expiry, each with a valid MAC: three times the memory's capacity.
    const refusals = new Map<string, number>();
    for (let i = 0; i < 3_000; i++) {
      const expiresAt = clock.now - 1 - i * 20_000;
      const reason = small.acceptSeen(`collected-${i}`, expiresAt, signer.signSeen(`collected-${i}`, expiresAt)) ?? 'taken';
      refusals.set(reason, (refusals.get(reason) ?? 0) + 1);
    }
    expect(Object.fromEntries(refusals)).toEqual({ expired: 3_000 });
    expect(small.verify(route, request, captured)).toBe('replayed');
  });
});
