import Link from 'next/link';
import type { ReactNode } from 'react';
import { signOutAction } from '@/app/actions/sign-out';
import { authorize, roleLabel, type Viewer } from '@/lib/auth/permissions';
import { Logo } from './logo';
import { Nav, type NavItem } from './nav';
import { IncidentSearch } from '@/components/incidents/incident-search';

function navFor(viewer: Viewer, pendingApprovals: number): NavItem[] {
  const items: NavItem[] = [
    { href: '/', label: 'Overview' },
    { href: '/outcomes', label: 'Outcomes' },
    { href: '/approvals', label: 'Approvals', pendingApprovals },
    { href: '/incidents', label: 'Incidents' },
    { href: '/admin/tools', label: 'Tools' },
  ];
  if (authorize(viewer, 'approval.revoke')) items.push({ href: '/admin/authorizations', label: 'Authorizations' });
  if (authorize(viewer, 'users.manage')) items.push({ href: '/admin/users', label: 'Users' });
  if (authorize(viewer, 'apikeys.manage')) items.push({ href: '/admin/api-keys', label: 'API keys' });
  if (authorize(viewer, 'servers.manage')) items.push({ href: '/admin/servers', label: 'Servers' });
  if (authorize(viewer, 'policy.manage')) items.push({ href: '/admin/policy', label: 'Policy' });
  if (authorize(viewer, 'webhooks.manage')) items.push({ href: '/admin/webhooks', label: 'Webhooks' });
  if (authorize(viewer, 'audit.read'))
    items.push({ href: '/admin/audit', label: 'Audit log' }, { href: '/admin/access-log', label: 'Access log' });
  items.push({ href: '/api-docs', label: 'API reference' }, { href: '/account', label: 'Account' });
  return items;
}

export function Shell({
  viewer,
  pendingApprovals,
  children,
}: {
  viewer: Viewer;
  pendingApprovals: number;
  children: ReactNode;
}) {
  return (
    <div className="min-h-screen md:flex">
      <a
        href="#main"
        className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-2"
      >
        Skip to content
      </a>
      <aside className="bg-slate-900 text-white md:sticky md:top-0 md:flex md:h-screen md:w-60 md:shrink-0 md:flex-col">
        <div className="flex items-center justify-between px-4 py-4">
          <Link href="/" className="rounded">
            <Logo className="text-white" />
          </Link>
        </div>
        <div className="px-3 pb-3 md:flex-1">
          <Nav items={navFor(viewer, pendingApprovals)} />
        </div>
        <div className="hidden border-t border-slate-800 px-4 py-4 md:block">
          <p className="truncate text-sm font-medium" data-testid="viewer-email">
            {viewer.email}
          </p>
          <p className="text-xs text-slate-400" data-testid="viewer-role">
            {roleLabel[viewer.role]}
          </p>
          <form action={signOutAction} className="mt-3">
            <button type="submit" className="text-xs font-medium text-slate-300 hover:text-white">
              Sign out
            </button>
          </form>
        </div>
      </aside>
      <div className="min-w-0 flex-1">
        <header className="flex flex-wrap items-center justify-between gap-3 border-b border-slate-200 bg-white px-4 py-2 text-sm sm:px-6 lg:px-8">
          {authorize(viewer, 'incidents.read') ? <IncidentSearch className="w-full max-w-md" /> : <span />}
          <span className="flex items-center gap-3 md:hidden">
            <span className="truncate text-slate-700">
              {viewer.email} · {roleLabel[viewer.role]}
            </span>
            <form action={signOutAction}>
              <button type="submit" className="font-medium text-indigo-600">
                Sign out
              </button>
            </form>
          </span>
        </header>
        <main id="main" className="mx-auto max-w-7xl px-4 py-8 sm:px-6 lg:px-8">
          {children}
        </main>
      </div>
    </div>
  );
}
