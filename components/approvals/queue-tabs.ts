// The queue's tabs, shared by the page (a server component) and the live list (a client one).
export type QueueTab = 'needs_my_decision' | 'waiting_on_others' | 'all';

export const queueTabs: { tab: QueueTab; label: string }[] = [
  { tab: 'needs_my_decision', label: 'Needs my decision' },
  { tab: 'waiting_on_others', label: 'Waiting on others' },
  { tab: 'all', label: 'All pending' },
];
