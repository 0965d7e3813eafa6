/**
 * Saves the agent's librarian documents in the background: an iteration hands a document over and goes on at
 * once (TrustGraph's agent waits for each save, up to 120 s when no librarian answers). At most `maxInFlight`
 * saves run at a time; beyond that a document is not saved (and not linked from the explain triples), so a slow or
 * absent librarian can neither delay a dialog nor pile up memory. Every outcome is logged and counted; a failed
 * save never touches the dialog's responses.
 */
import type { Logger } from 'pino';
import type { RequestClient } from '../bus/index.js';
import { addDocumentRequest, type AgentDocument, type DocumentSink } from '../agent/index.js';
import type { LibrarianRequest, LibrarianResponse } from '../wire/index.js';
import { errorMessage } from '../errors/index.js';
import { offCriticalPath } from './off-critical-path.js';
import { LibrarianError } from './errors.js';

/** `saved`: the librarian confirmed; `failed`: error reply, timeout or publish failure; `skipped`: too many in flight. */
export type DocumentSaveOutcome = 'saved' | 'failed' | 'skipped';

export interface DocumentSaverOptions {
  client: RequestClient<LibrarianRequest, LibrarianResponse>;
  maxInFlight: number;
  timeoutMs: number;
  logger: Logger;
  onOutcome?(outcome: DocumentSaveOutcome): void;
}

const SKIP_LOG_INTERVAL_MS = 10_000;

export class DocumentSaver implements DocumentSink {
  private readonly inFlight = new Set<Promise<void>>();
  /** Set once the flow stops: the saves still waiting fail as their client closes, counted but not logged each. */
  private stopped = false;
  /** Skips since the last warning, and when that was: under load a skip can happen every iteration. */
  private skipsUnlogged = 0;
  private lastSkipLogAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly options: DocumentSaverOptions,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Saves currently waiting for the librarian. */
  get pending(): number {
    return this.inFlight.size;
  }

  save(document: AgentDocument): string | undefined {
    if (this.stopped) {
      this.options.onOutcome?.('skipped');
      return undefined;
    }
    if (this.inFlight.size >= this.options.maxInFlight) {
      this.warnSkipped(document.id);
      this.options.onOutcome?.('skipped');
      return undefined;
    }
    const saving = offCriticalPath(() => this.run(document)).finally(() => this.inFlight.delete(saving));
    this.inFlight.add(saving);
    return document.id;
  }

  /**
   * Before the flow's clients close: wait (at most `timeoutMs`) for the saves in flight, then give up on the rest
   * quietly (the caller says so in one line). Returns how many were given up; later saves are skipped.
   */
  async stop(timeoutMs: number): Promise<number> {
    if (this.inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([Promise.allSettled([...this.inFlight]), deadline]);
      clearTimeout(timer);
    }
    this.stopped = true;
    return this.inFlight.size;
  }

  private async run(document: AgentDocument): Promise<void> {
    try {
      const response = await this.options.client.request(addDocumentRequest(document), { timeoutMs: this.options.timeoutMs });
      if (response.error) throw new LibrarianError(`librarian error (${response.error.type}): ${response.error.message}`);
      this.options.onOutcome?.('saved');
    } catch (error) {
      if (!this.stopped) this.options.logger.warn({ err: error, document: document.id }, `Failed to save a librarian document: ${errorMessage(error)}`);
      this.options.onOutcome?.('failed');
    }
  }

  /** The first skip is logged at once, later ones at most every SKIP_LOG_INTERVAL_MS with how many there were. */
  private warnSkipped(documentId: string): void {
    this.skipsUnlogged += 1;
    const now = this.clock();
    if (now - this.lastSkipLogAt < SKIP_LOG_INTERVAL_MS) return;
    this.options.logger.warn(
      { document: documentId, inFlight: this.inFlight.size, skipped: this.skipsUnlogged },
      `Not saving ${this.skipsUnlogged === 1 ? 'a librarian document' : `${this.skipsUnlogged} librarian documents`}: ` +
        `${this.options.maxInFlight} saves are already waiting for the librarian (logged at most every ${SKIP_LOG_INTERVAL_MS / 1000} s; ` +
        'tg_agent_librarian_documents_total{outcome="skipped"} counts each)',
    );
    this.skipsUnlogged = 0;
    this.lastSkipLogAt = now;
  }
}
