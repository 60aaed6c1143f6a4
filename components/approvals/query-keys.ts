// One query-key factory for approvals (STYLE.md §10).
export const approvalKeys = {
  all: ['approvals'] as const,
  list: (status: string) => [...approvalKeys.all, 'list', status] as const,
  pendingCount: () => [...approvalKeys.all, 'pending-count'] as const,
};
