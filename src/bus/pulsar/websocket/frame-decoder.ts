/**
 * Decodes a consumer's text frames in arrival order. A large frame (a config answer of 10 000 tools is a
 * 4.6 MiB frame: bytes → string, `JSON.parse`, base64 → bytes take ~10 ms and leave three copies of it as
 * garbage) is decoded in a worker thread, so the event loop keeps serving requests meanwhile; frames behind
 * it wait for it, so the order never changes. If the worker fails, the frame is decoded here instead; so is
 * a large frame that arrives before the worker has started, which starts it.
 */
import type { Logger } from 'pino';
import { siblingModule, WorkerClient } from '../../../threads/index.js';
import { decodeFrame, type DecodedFrame } from './frame.js';

/** Frames of at least this many bytes are decoded in the worker. */
export const OFF_THREAD_FRAME_BYTES = 256 * 1024;

/** One worker for every consumer of the process, started by the first large frame. */
let shared: WorkerClient<Uint8Array, DecodedFrame> | undefined;

function sharedWorker(): WorkerClient<Uint8Array, DecodedFrame> {
  shared ??= new WorkerClient(siblingModule(import.meta.url, 'frame-worker'), 'WebSocket frame decoding');
  return shared;
}

export class FrameDecoder {
  /** Frames still being decoded in the worker; later frames are handed over after them. */
  private queue: Promise<void> | undefined;
  private inFlight = 0;

  private readonly worker: WorkerClient<Uint8Array, DecodedFrame> | undefined;

  /** @param workerEntry another worker module (tests); by default every decoder shares one worker */
  constructor(
    private readonly logger: Logger,
    private readonly onDecoded: (frame: DecodedFrame) => void,
    private readonly offThreadBytes = OFF_THREAD_FRAME_BYTES,
    workerEntry?: URL,
  ) {
    this.worker = workerEntry && new WorkerClient(workerEntry, 'WebSocket frame decoding');
  }

  /** Start the worker now; resolves once it is ready (tests; otherwise the first large frame starts it). */
  warmUp(): Promise<void> {
    return this.workerClient().start();
  }

  push(bytes: Buffer): void {
    const worker = this.workerClient();
    const offThread = bytes.length >= this.offThreadBytes && worker.ready;
    if (bytes.length >= this.offThreadBytes && !worker.ready) {
      worker.start().catch((error: unknown) => {
        this.logger.warn({ err: error }, 'The WebSocket frame decoding worker could not start; large frames are decoded on the event loop');
      });
    }
    if (!offThread && this.inFlight === 0) {
      this.onDecoded(decodeFrame(bytes.toString('utf8')));
      return;
    }
    const decoded = offThread ? this.offThread(bytes) : Promise.resolve(decodeFrame(bytes.toString('utf8')));
    this.inFlight++;
    const previous = this.queue ?? Promise.resolve();
    this.queue = previous
      .then(() => decoded)
      .then((frame) => this.onDecoded(frame))
      .catch((error: unknown) => this.logger.error({ err: error }, 'Handing over a decoded WebSocket frame failed'))
      .finally(() => {
        if (--this.inFlight === 0) this.queue = undefined;
      });
  }

  private workerClient(): WorkerClient<Uint8Array, DecodedFrame> {
    return this.worker ?? sharedWorker();
  }

  private async offThread(bytes: Buffer): Promise<DecodedFrame> {
    try {
      // Copied, not moved: `bytes` may be a view of memory the WebSocket library still uses.
      return asBuffers(await this.workerClient().call(bytes));
    } catch (error) {
      this.logger.warn({ err: error, bytes: bytes.length }, 'Decoding a WebSocket frame in a worker failed; decoding it on the event loop instead');
      return decodeFrame(bytes.toString('utf8'));
    }
  }
}

/** A payload comes back from the worker as a plain Uint8Array; consumers get Buffers. */
function asBuffers(frame: DecodedFrame): DecodedFrame {
  if (!('message' in frame)) return frame;
  const { payload } = frame.message;
  return { message: { ...frame.message, payload: Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength) } };
}
