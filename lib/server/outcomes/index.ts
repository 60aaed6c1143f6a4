// Outcome records: ingestion (the hot path, on the pool) and reading (docs/design.md "Outcome log").
export { ingestOutcomes } from './ingest';
export { recordStateCheck } from './state-check';
export type { IngestedRecord, IngestResponse } from './rows';
export {
  findOutcomeRequestRef,
  getOutcome,
  listFindingInputs,
  listIncidentOutcomes,
  listOutcomes,
  listTaskRecords,
  type FindingInput,
  type OutcomePage,
  type TaskRecordView,
  type OutcomeView,
} from './read';
