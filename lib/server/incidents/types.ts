import 'server-only';
import { type OutcomeView } from '../outcomes';
import { type ApprovalStatus } from '@/lib/approvals/schemas';
import { type IncidentTimelineEntry } from '@/lib/incidents/timeline';
import { type Finding, type IncidentSummary } from '@/lib/incidents/types';

/** An approval request of the incident, as its summary card and the API list it. */
export type IncidentApprovalSummary = {
  id: string;
  /** Effective: a pending request past its expiry (database clock) reads expired. */
  status: ApprovalStatus;
  server: string;
  tool: string;
  principal: string;
  summary: string;
  requiredApprovals: number;
  approvals: number;
  createdAt: Date;
};

export type IncidentView = {
  requestRef: string;
  /** The one sentence of what was and was not done, and where its approvals stand. */
  sentence: string;
  summary: IncidentSummary;
  findings: Finding[];
  /** Outcome records and approval steps, oldest first. */
  timeline: IncidentTimelineEntry[];
  approvals: IncidentApprovalSummary[];
  records: (OutcomeView & { seq: number })[];
};

/** A grant redeemed under one of an incident's request references (for the grant check of findings). */
export type RedeemedGrant = { id: string; requestRef: string; server: string; tool: string };
