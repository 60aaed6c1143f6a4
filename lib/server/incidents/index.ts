// Incidents: everything under one request reference, its search, and findings across many.
export type { IncidentTimelineEntry } from '@/lib/incidents/timeline';
export type { IncidentApprovalSummary, IncidentView } from './types';
export { getIncident, incidentApiBody, incidentReport, openIncident, resolveIncidentRef } from './read';
export { findOutcomeRequestRef, listFindingInputs, listIncidentOutcomes, type FindingInput } from './records';
export { countRecentFindings, findingsByRecord, summarizeIncidents, type IncidentSummary } from './policy';
export {
  listFlaggedIncidents,
  listRecentIncidents,
  matchIncidents,
  searchIncidents,
  summarizeHits,
  PARTIAL_MIN,
  type IncidentHit,
  type IncidentMatch,
  type IncidentMatchKind,
} from './search';
