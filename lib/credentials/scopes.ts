export const apiScopes = ['outcomes:write', 'outcomes:read', 'approvals:request', 'grants:redeem'] as const;
export type ApiScope = (typeof apiScopes)[number];

export const scopeDescription: Record<ApiScope, string> = {
  'outcomes:write': 'Post outcome records',
  'outcomes:read': 'Read outcome records and incidents',
  'approvals:request': 'Stage writes for approval',
  'grants:redeem': 'Redeem approved grants',
};
