import { Shell } from '@/components/shell/shell';
import { requireViewer } from '@/lib/server/http/session';
import { countPendingApprovals } from '@/lib/server/data/approvals';

export default async function ConsoleLayout({ children }: { children: React.ReactNode }) {
  const viewer = await requireViewer();
  return (
    <Shell viewer={viewer} pendingApprovals={await countPendingApprovals(viewer)}>
      {children}
    </Shell>
  );
}
