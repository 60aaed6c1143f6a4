import { Shell } from '@/components/shell/shell';
import { requireViewer } from '@/lib/server/auth/session';
import { countPendingApprovals } from '@/lib/server/approvals';

export default async function ConsoleLayout({ children }: { children: React.ReactNode }) {
  const viewer = await requireViewer();
  return (
    <Shell viewer={viewer} pendingApprovals={await countPendingApprovals(viewer)}>
      {children}
    </Shell>
  );
}
