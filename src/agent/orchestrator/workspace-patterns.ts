/** Every workspace's pattern catalog, rebuilt whole when its `agent-pattern` or `agent-task-type` config changes. */
import type { Logger } from 'pino';
import type { WorkspaceSnapshot } from '../../config/index.js';
import { buildPatternCatalog, PATTERN_CONFIG_TYPES, type PatternCatalog } from './catalog.js';

export class WorkspacePatterns {
  private readonly catalogs = new Map<string, PatternCatalog>();

  /** `runnable`: the patterns this agent runs (the pattern table's ids). */
  constructor(
    private readonly logger: Logger,
    private readonly runnable: readonly string[],
  ) {}

  /** Whether a config change touches the pattern config. */
  static affectedBy(changedTypes: readonly string[]): boolean {
    return changedTypes.some((t) => (PATTERN_CONFIG_TYPES as readonly string[]).includes(t));
  }

  rebuild(workspace: string, snapshot: WorkspaceSnapshot): PatternCatalog {
    const catalog = buildPatternCatalog(this.runnable, snapshot['agent-pattern'] ?? {}, snapshot['agent-task-type'] ?? {});
    this.catalogs.set(workspace, catalog);
    for (const problem of catalog.problems) this.logger.warn({ workspace }, `Pattern configuration problem: ${problem}`);
    this.logger.info(
      { workspace, patterns: [...catalog.patterns.keys()], taskTypes: [...catalog.taskTypes.keys()], configured: catalog.configured },
      'Agent patterns loaded',
    );
    return catalog;
  }

  get(workspace: string): PatternCatalog | undefined {
    return this.catalogs.get(workspace);
  }

  delete(workspace: string): void {
    this.catalogs.delete(workspace);
  }
}
