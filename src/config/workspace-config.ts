/**
 * The last known values of every config type the agent reads, per workspace.
 *
 * TrustGraph's config push names only the types that changed, and its agent then rebuilds from those
 * types alone (a `tool`-only change loses the `tool-service` values, docs/trustgraph-agent-notes.md §2.7). Here a change
 * replaces only the types it names; the others keep their last values (design decision 5 (docs/design.md)).
 */

/** Config type → key → value (a JSON string by convention, opaque here). */
export type TypeValues = Readonly<Record<string, string>>;
export type WorkspaceSnapshot = Readonly<Record<string, TypeValues>>;

export class WorkspaceConfigStore {
  private readonly workspaces = new Map<string, Map<string, TypeValues>>();

  /** Replace the values of the given types in one workspace; returns the workspace's full snapshot. */
  apply(workspace: string, changed: Readonly<Record<string, TypeValues>>): WorkspaceSnapshot {
    let types = this.workspaces.get(workspace);
    if (!types) {
      types = new Map();
      this.workspaces.set(workspace, types);
    }
    // A frozen map (the config client's) is kept as is: copying 10 000 values on every reload is garbage.
    for (const [type, values] of Object.entries(changed)) types.set(type, Object.isFrozen(values) ? values : Object.freeze({ ...values }));
    return this.snapshot(workspace);
  }

  snapshot(workspace: string): WorkspaceSnapshot {
    const types = this.workspaces.get(workspace);
    return Object.freeze(Object.fromEntries(types ?? []));
  }

  values(workspace: string, type: string): TypeValues {
    return this.workspaces.get(workspace)?.get(type) ?? {};
  }

  delete(workspace: string): boolean {
    return this.workspaces.delete(workspace);
  }

  workspaceNames(): string[] {
    return [...this.workspaces.keys()].sort();
  }
}
