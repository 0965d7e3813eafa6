import { describe, expect, it } from 'vitest';
import { modelContext } from '../../../src/agent/patterns/react.js';

describe("the agent-react prompt's context (TrustGraph's orchestrator: additional context, then framing)", () => {
  it('joins the two with a blank line, takes either alone, and is null without both', () => {
    expect(modelContext('Answer in French.', 'Be brief.')).toBe('Answer in French.\n\nBe brief.');
    expect(modelContext('Answer in French.', '')).toBe('Answer in French.');
    expect(modelContext(undefined, 'Be brief.')).toBe('Be brief.');
    expect(modelContext('', '')).toBeNull();
    expect(modelContext(undefined, '')).toBeNull();
  });
});
