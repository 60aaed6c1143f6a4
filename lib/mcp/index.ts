// Countersign's agent-side integration for MCP clients (SDK v2's `@modelcontextprotocol/client`, both
// eras). No Next.js, no Prisma: usable from any Node agent runtime.
export { withCountersign, CountersignClient } from './countersign-client';
export type { CountersignOptions, CallOptions, GuardedCallResult } from './countersign-client';
export { observeToolCall, observingFetch, prepareSession } from './observe';
export type { Observation, ObserveCallOptions, SessionReady } from './observe';
export { loadToolCatalog } from './catalog';
export type { ToolCatalog } from './catalog';
export { declaredCategory, foldedJsonRpcCode } from './observed';
export { OutcomeReporter, createReporter } from './reporter';
export type { ReporterOptions, ReporterEvent, ReporterStats, FlushResult } from './reporter';
export { obtainGrant } from './approvals';
export type {
  ApprovalRequestBody,
  ApprovalSnapshot,
  ApprovalStatus,
  ApprovalWaitOptions,
  GrantOutcome,
} from './approvals';
export { callToolWithRetry, retryStep } from './retry';
export type { RetryOutcome, RetryPolicy, RetryStep, RetryStop, StateCheckVerdict } from './retry';
export { argsDigest } from './digest';
export { canonicalJson } from '../json/canonical';
export type { ArgsDigest } from './digest';
export type { CountersignEndpoint, FetchLike } from './countersign-http';
// The shared classifier and record types, re-exported so integrators need one import.
export { classifyOutcome, classifyRecord, isSuccess } from '../outcomes/classify';
export type { Classification, Observed, Outcome } from '../outcomes/schemas';
