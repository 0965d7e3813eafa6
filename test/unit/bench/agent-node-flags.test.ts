import { describe, expect, it } from 'vitest';
import { agentNodeFlags } from '../../../bench/support/options.js';

describe('agentNodeFlags', () => {
  it('gives the agent nothing more when the benchmark was asked for nothing', () => {
    expect(agentNodeFlags(new Map(), '/logs')).toEqual([]);
  });

  it('turns --cpu-prof, --trace-gc and --node-flags into the node flags of the agent, the profile into the log directory', () => {
    const flags = new Map([
      ['cpu-prof', 'true'],
      ['trace-gc', 'true'],
      ['node-flags', '--max-semi-space-size=32  --trace-gc-nvp'],
    ]);
    expect(agentNodeFlags(flags, '/logs')).toEqual(['--cpu-prof', '--cpu-prof-dir', '/logs', '--trace-gc', '--max-semi-space-size=32', '--trace-gc-nvp']);
  });
});
