import { Shell } from '@/components/shell/shell';
import { requireViewer } from '@/lib/server/session';

export default async function ConsoleLayout({ children }: { children: React.ReactNode }) {
  const viewer = await requireViewer();
  return <Shell viewer={viewer}>{children}</Shell>;
}
