// Approval requests: staged writes, their decisions, grants and expiry (docs/design.md "Approvals").
export type { ApprovalView, DecisionView, GrantView } from '@/lib/approvals/view';
export { listPolicyRules, setPolicyRule, deletePolicyRule, type PolicyRuleView } from '../policy/policy-rules';
export { dbNow, keyActor, refusedByDatabase, TX_OPTIONS } from './shared';
export { requestApproval, stageWrite, type ApprovalCreated, type GuardRefused } from './request';
export { countPendingApprovals, findApprovalIdForGrant, getApproval, listApprovals, type ApprovalPage } from './read';
export { decideApproval, revokeApproval, withdrawApproval, type DecisionInput, type RevokeInput } from './decide';
export { expireStaleApprovals } from './expiry';
