// What the agent-integration demo takes and reports (scripts/demo-agent.ts, --json).
import type { Delivery } from '../../lib/outcomes/schemas';
import type { OutcomeReporter } from '../../lib/mcp';

export interface DemoAgentOptions {
  countersignUrl: string;
  apiKey: string;
  reviewerToken?: string;
  principal?: string;
  organization?: string;
  approvalWaitMs?: number;
  log?: (line: string) => void;
}

/** An approval request as the reviewer token read it before deciding (GET /api/v1/approvals/{id}). */
export interface ReviewerSaw {
  arguments: Record<string, unknown> | null;
  argumentsNote: string | null;
  /** As the server declared it, when the gateway staged the request. */
  toolDescription: string | null;
}

export interface ScenarioReport {
  name: string;
  requestRef: string;
  expected: { delivery: Delivery; category: string };
  delivery?: Delivery;
  category?: string;
  retry?: string;
  grantId?: string;
  approvalId?: string | null;
  idempotencyKey?: string;
  reviewerSaw?: ReviewerSaw;
  skipped?: string;
  note?: string;
}

export interface DemoAgentReport {
  runId: string;
  scenarios: ScenarioReport[];
  reporter: ReturnType<OutcomeReporter['stats']>;
  findings: { requestRef: string; kinds: string[] } | null;
}
