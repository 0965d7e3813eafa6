/**
 * Every stand-in of the harness's workspace: its flows' services (flow-stand-ins.ts), the one librarian the
 * workspace's flows share, and the tool services with the `tool-service` config entries that describe them.
 * `stop` stops them all, newest first.
 */
import type { Transport } from '../../../src/bus/transport.js';
import type { ConfigEntry } from '../../../dev/stand-ins/config-service.js';
import { startLibrarian, type LibrarianStandIn } from '../../../dev/stand-ins/librarian.js';
import { startToolService, type ToolServiceStandIn } from '../../../dev/stand-ins/tool-service.js';
import { agentFlowTopics, toolServiceDescriptor, toolServiceQueues, uniqueSuffix } from '../../../dev/flow-config.js';
import { startFlowStandIns } from './flow-stand-ins.js';
import type { FlowBehaviour, FlowStandIns, ToolServiceSpec } from './harness-types.js';

export class WorkspaceStandIns {
  readonly flows: Record<string, FlowStandIns> = {};
  readonly toolServices: Record<string, ToolServiceStandIn> = {};
  private librarianStandIn: LibrarianStandIn | undefined;
  private readonly cleanups: (() => Promise<unknown>)[] = [];

  constructor(
    private readonly transport: Transport,
    readonly workspace: string,
    /** The flow whose queues the librarian's name (they are the workspace's, the same for every flow). */
    private readonly defaultFlow: string,
  ) {}

  get librarian(): LibrarianStandIn | undefined {
    return this.librarianStandIn;
  }

  /** Run `stop` when the workspace's stand-ins stop (after those started later). */
  onStop(cleanup: () => Promise<unknown>): void {
    this.cleanups.push(cleanup);
  }

  /** The stand-ins of `flow`, started unless they run already. */
  async flow(flow: string, behaviour: FlowBehaviour): Promise<FlowStandIns> {
    const running = this.flows[flow];
    if (running) return running;
    const standIns = await startFlowStandIns(this.transport, this.workspace, flow, behaviour);
    this.flows[flow] = standIns;
    this.onStop(() => standIns.stop());
    return standIns;
  }

  /** Start the workspace's librarian if a flow asks for one; a function setting decides its answers from now on. */
  async useLibrarian(setting: FlowBehaviour['librarian']): Promise<void> {
    if (!setting) return;
    if (!this.librarianStandIn) {
      const topics = agentFlowTopics(this.workspace, this.defaultFlow);
      const standIn = await startLibrarian({
        transport: this.transport,
        requestQueue: topics['librarian-request'] ?? '',
        responseQueue: topics['librarian-response'] ?? '',
      });
      this.onStop(() => standIn.stop());
      this.librarianStandIn = standIn;
    }
    if (typeof setting === 'function') this.librarianStandIn.answer = setting;
  }

  /** Start a stand-in per tool service; the `tool-service` config entries that describe them. */
  async startToolServices(specs: Record<string, ToolServiceSpec>): Promise<ConfigEntry[]> {
    const entries: ConfigEntry[] = [];
    for (const [id, spec] of Object.entries(specs)) {
      const queues = toolServiceQueues(spec.topic ?? `${id}-${uniqueSuffix()}`);
      const standIn = await startToolService({
        transport: this.transport,
        id,
        ...queues,
        handler: spec.handler ?? ((args, cfg) => ({ arguments: args, config: cfg })),
      });
      this.onStop(() => standIn.stop());
      this.toolServices[id] = standIn;
      entries.push({
        type: 'tool-service',
        key: id,
        value: {
          ...toolServiceDescriptor({ id, ...queues, ...(spec.configParams ? { configParams: spec.configParams } : {}) }),
          ...(spec.group ? { group: spec.group } : {}),
          ...(spec.idempotent === undefined ? {} : { idempotent: spec.idempotent }),
        },
      });
    }
    return entries;
  }

  async stop(): Promise<void> {
    await Promise.allSettled(this.cleanups.splice(0).reverse().map((cleanup) => cleanup()));
  }
}
