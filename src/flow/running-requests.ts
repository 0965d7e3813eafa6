/**
 * The requests a flow is running, by id and bytes. A broker that lost an ack with a connection or a node
 * (RabbitMQ: the connection closed before the node read it, or a mirror promoted in the place of the queue's
 * node) delivers the request again, marked redelivered, possibly to the replica still running it: that delivery
 * is a duplicate, and running it would end the conversation twice.
 */
export class RunningRequests {
  private readonly byId = new Map<string, Buffer[]>();

  /** True when a request with this id and these bytes is running here. */
  has(id: string, payload: Buffer): boolean {
    return this.byId.get(id)?.some((running) => running.equals(payload)) ?? false;
  }

  add(id: string, payload: Buffer): void {
    const same = this.byId.get(id);
    if (same) same.push(payload);
    else this.byId.set(id, [payload]);
  }

  delete(id: string, payload: Buffer): void {
    const same = this.byId.get(id);
    const at = same?.indexOf(payload) ?? -1;
    if (!same || at < 0) return;
    same.splice(at, 1);
    if (same.length === 0) this.byId.delete(id);
  }
}
