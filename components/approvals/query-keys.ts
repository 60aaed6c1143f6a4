// One query-key factory for approvals.
export const approvalKeys = {
  all: ['approvals'] as const,
  list: (status: string) => [...approvalKeys.all, 'list', status] as const,
  pendingCount: () => [...approvalKeys.all, 'pending-count'] as const,
};
