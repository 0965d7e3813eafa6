/**
 * AgentService in memory (the real service and stand-ins on one in-process bus): readiness that tells the
 * truth before and after the configuration loads and while the broker connection is lost, flows started and
 * stopped as their config entries come and go, and a registry rebuilt from each tool change.
 */
import { describe, expect, it } from 'vitest';
import type { MemoryTransport } from '../../src/bus/memory/memory-transport.js';
import { knowledgeQueryTool } from '../../dev/flow-config.js';
import { harnessPerTest } from '../support/harness-per-test.js';

describe('AgentService', () => {
  const start = harnessPerTest({ transport: 'memory' });

  it('is not ready until its configuration is loaded, then ready with its flow running', async () => {
    const h = await start({ configAvailable: false, waitReady: false, settings: { configTimeoutSeconds: 0.2 } });
    await h.waitFor(() => h.config.calls.length >= 1, 'a config load attempt');
    expect(h.service.readiness()).toEqual({ ready: false, detail: expect.stringMatching(/^configuration not loaded yet: waiting for TrustGraph's config service/) });
    expect(h.service.runningFlows()).toEqual([]);
    h.config.available = true;
    await h.started;
    await h.waitReady(5_000);
    expect(h.service.runningFlows().map((f) => [f.workspace, f.flow])).toEqual([[h.workspace, 'default']]);
    expect(h.service.configVersion).toBe(h.config.version);
  });

  it('reports a lost broker connection, and is ready again once it is back', async () => {
    const h = await start();
    const bus = h.transport as MemoryTransport;
    bus.dropConnection();
    expect(h.service.readiness()).toMatchObject({ ready: false, detail: expect.stringMatching(/^broker connection: /) });
    bus.restoreConnection();
    await h.waitReady(5_000);
    expect((await h.ask({ question: 'q' })).last).toMatchObject({ message_type: 'answer', content: 'ok' });
  });

  it('starts and stops flows as their entries are written and deleted', async () => {
    const h = await start();
    await h.addFlow('second');
    await h.configApplied();
    await h.waitFor(() => h.service.runningFlows().some((f) => f.flow === 'second'), 'the second flow to start');
    expect((await h.ask({ question: 'q' }, { flow: 'second' })).last).toMatchObject({ content: 'ok', end_of_dialog: true });
    await h.removeFlow('second');
    await h.configApplied();
    await h.waitFor(() => !h.service.runningFlows().some((f) => f.flow === 'second'), 'the second flow to stop');
    expect(h.service.runningFlows().map((f) => f.flow)).toEqual(['default']);
  });

  it('rebuilds the workspace registry on every tool change, and offers the new tools at once', async () => {
    const h = await start({ tools: { a: knowledgeQueryTool('first') } });
    expect(h.service.registries.get(h.workspace).tools.map((t) => t.name)).toEqual(['first']);
    await h.putTool('b', knowledgeQueryTool('second'));
    await h.deleteTool('a');
    await h.configApplied();
    expect(h.service.registries.get(h.workspace).tools.map((t) => t.name)).toEqual(['second']);
    await h.ask({ question: 'q' });
    expect(JSON.parse(h.prompt.lastReact().request.terms.tool_names!)).toBe('second');
  });
});
