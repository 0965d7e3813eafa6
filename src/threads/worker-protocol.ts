/** Messages between a `WorkerClient` and the worker it runs (`serveCalls`). */
export interface WorkerCall<Req> {
  readonly id: number;
  readonly request: Req;
}

export type WorkerAnswer<Res> =
  | { readonly id: number; readonly ok: true; readonly result: Res }
  | { readonly id: number; readonly ok: false; readonly error: string };

/** The worker's first message: it is loaded and serving. */
export interface WorkerReady {
  readonly ready: true;
}
