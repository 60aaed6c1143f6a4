// Outcome records: ingestion (the hot path, on the pool) and reading (docs/design.md "Outcome log").
export { ingestOutcomes } from './ingest';
export { recordStateCheck } from './state-check';
export type { IngestedRecord, IngestResponse } from './rows';
export { getOutcome, listOutcomes, listTaskRecords, type OutcomePage, type TaskRecordView } from './read';
export type { OutcomeView } from './view';
