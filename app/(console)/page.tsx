import Link from 'next/link';
import { Card, PageHeader } from '@/components/ui/card';
import { can } from '@/lib/auth/permissions';
import { requireViewer } from '@/lib/server/session';

export const metadata = { title: 'Overview' };

export default async function OverviewPage() {
  const viewer = await requireViewer();
  const steps = [
    { done: true, text: 'Sign in to the console.' },
    can(viewer, 'apikeys.manage')
      ? { done: false, text: <>Create an API key with the <code className="font-mono text-xs">outcomes:write</code> scope on <Link className="text-indigo-600 hover:underline" href="/admin/api-keys">API keys</Link>.</> }
      : { done: false, text: 'Ask an admin for an API key with the outcomes:write scope for your agent runtime.' },
    { done: false, text: <>Point your agent runtime or MCP gateway at <code className="font-mono text-xs">POST /api/v1/outcomes</code>.</> },
  ];
  return (
    <>
      <PageHeader title="Overview" description="What your agents did, did not do, and are waiting to do." />
      <Card title="Getting started" description="Countersign shows outcomes once agents report them.">
        <ol className="space-y-3">
          {steps.map((s, i) => (
            <li key={i} className="flex items-start gap-3 text-sm text-slate-700">
              <span aria-hidden className={`mt-0.5 flex h-5 w-5 shrink-0 items-center justify-center rounded-full text-xs font-semibold ${s.done ? 'bg-emerald-100 text-emerald-700' : 'bg-slate-100 text-slate-500'}`}>{s.done ? '✓' : i + 1}</span>
              <span>{s.text}</span>
            </li>
          ))}
        </ol>
      </Card>
    </>
  );
}
