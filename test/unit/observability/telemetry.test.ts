import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { AgentMetrics } from '../../../src/observability/metrics.js';
import { AgentTelemetry } from '../../../src/observability/telemetry.js';
import { buildRegistry } from '../../../src/tools/registry/registry.js';

const { registry } = buildRegistry({
  workspace: 'w',
  version: 1,
  tools: { a: JSON.stringify({ type: 'knowledge-query', name: 'lookup', group: ['g1'] }) },
});

function telemetry(mcpDiscovery = false): { metrics: AgentMetrics; telemetry: AgentTelemetry } {
  const metrics = new AgentMetrics('agent-7', { defaultMetrics: false });
  return { metrics, telemetry: new AgentTelemetry({ metrics, logger: pino({ level: 'silent' }), transport: 'websocket', mcpDiscovery }) };
}

/** The exported lines of one metric family (without HELP and TYPE). */
async function lines(metrics: AgentMetrics, name: string): Promise<string[]> {
  const { body } = await metrics.scrape();
  return body.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

describe('the agent telemetry', () => {
  it('puts the processor label on every series it exports', async () => {
    const { metrics, telemetry: t } = telemetry();
    t.registryRebuilt(registry, 0.01);
    t.consumed('request:tg:a', 0.2, true);
    t.downstream('prompt-request', { seconds: 1, status: 'error', errorType: 'llm-error' });
    const series = (await metrics.scrape()).body.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
    expect(series.length).toBeGreaterThan(50);
    expect(series.filter((line) => !line.includes('processor="agent-7"'))).toEqual([]);
    expect(await lines(metrics, 'tg_agent_transport_info')).toEqual(['tg_agent_transport_info{transport="websocket",processor="agent-7"} 1']);
    expect(await lines(metrics, 'tg_downstream_error_total')).toEqual([
      'tg_downstream_error_total{target_service="prompt-request",error_type="llm-error",processor="agent-7"} 1',
    ]);
  });

  it('exports both consumer statuses from 0 once a consumer subscribes', async () => {
    const { metrics, telemetry: t } = telemetry();
    t.subscribing('request:tg:a');
    expect(await lines(metrics, 'tg_consumer_processing_total')).toEqual([
      'tg_consumer_processing_total{consumer="request:tg:a",status="ok",processor="agent-7"} 0',
      'tg_consumer_processing_total{consumer="request:tg:a",status="error",processor="agent-7"} 0',
    ]);
  });

  it("updates a rebuilt workspace's availability series, the other workspaces' staying as they are", async () => {
    const { metrics, telemetry: t } = telemetry();
    const build = (workspace: string, version: number, groups: Record<string, string[]>) =>
      buildRegistry({
        workspace,
        version,
        tools: Object.fromEntries(Object.entries(groups).map(([name, group]) => [name, JSON.stringify({ type: 'knowledge-query', name, group })])),
      }).registry;
    t.registryRebuilt(build('w1', 1, { a: ['g1'], b: ['g1', 'g2'] }), 0.01);
    t.registryRebuilt(build('w2', 1, { c: ['g2'] }), 0.01);
    // w1 loses group g1 and gains g3; w2 is not touched.
    t.registryRebuilt(build('w1', 2, { a: ['g3'], b: ['g2'] }), 0.01);
    expect((await lines(metrics, 'tg_agent_tool_group_availability')).sort()).toEqual([
      'tg_agent_tool_group_availability{workspace="w1",group="default",processor="agent-7"} 0',
      'tg_agent_tool_group_availability{workspace="w1",group="g2",processor="agent-7"} 1',
      'tg_agent_tool_group_availability{workspace="w1",group="g3",processor="agent-7"} 1',
      'tg_agent_tool_group_availability{workspace="w2",group="default",processor="agent-7"} 0',
      'tg_agent_tool_group_availability{workspace="w2",group="g2",processor="agent-7"} 1',
    ]);
    expect(await lines(metrics, 'tg_agent_state_availability')).toEqual(
      expect.arrayContaining(['tg_agent_state_availability{workspace="w1",state="undefined",processor="agent-7"} 2', 'tg_agent_state_availability{workspace="w2",state="undefined",processor="agent-7"} 1']),
    );
  });

  it("removes a deleted workspace's series", async () => {
    const { metrics, telemetry: t } = telemetry(true);
    t.registryRebuilt(registry, 0.01);
    t.policyRead('w', ['a problem']);
    t.discoveryStatus('w', 2);
    expect(await lines(metrics, 'tg_agent_policy_problems')).toEqual(['tg_agent_policy_problems{workspace="w",processor="agent-7"} 1']);
    expect(await lines(metrics, 'tg_agent_registry_tools')).toHaveLength(1);
    expect(await lines(metrics, 'tg_agent_mcp_discovery_failing')).toHaveLength(1);
    t.workspaceDeleted('w');
    for (const name of ['tg_agent_policy_problems', 'tg_agent_registry_tools', 'tg_agent_registry_problems', 'tg_agent_mcp_discovery_failing']) {
      expect(await lines(metrics, name)).toEqual([]);
    }
  });
});
