/** What a request must pass before it runs (the request gate), signed iterations and the ledger of seen signatures. */
export { IterationSigner, LISTENING_SKEW_MS, RECORD_REFUSALS, type RecordRefusal } from './iteration-signature.js';
export { type GateTelemetry, SecurityGate } from './request-gate.js';
export { type LedgerTelemetry, SeenSignatureLedger } from './seen-signature-ledger.js';
