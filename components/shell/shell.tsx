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
  const user = (
    <div className="border-t border-slate-800 px-4 py-4">
      <p className="truncate text-sm font-medium" data-testid="viewer-email">
        {viewer.email}
      </p>
      <p className="text-xs text-slate-400" data-testid="viewer-role">
        {roleLabel[viewer.role]}
      </p>
      <form action={signOutAction} className="mt-3">
        <button
          type="submit"
          className="rounded text-xs font-medium text-slate-300 hover:text-white focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-400"
        >
          Sign out
        </button>
      </form>
    </div>
  );
  return (
    <div className="min-h-screen md:flex">
      <a
        href="#main"
        className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-2"
      >
        Skip to content
      </a>
      {/* The aside stretches to the page's full height (its dark background never ends mid-page);
          its content sticks to the viewport and scrolls on its own when the list is long. */}
      <aside className="bg-slate-900 text-white md:w-60 md:shrink-0">
        <div className="md:sticky md:top-0 md:flex md:h-screen md:flex-col">
          <Nav
            items={navFor(viewer, pendingApprovals)}
            brand={
              <Link
                href="/"
                className="rounded focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-400"
              >
                <Logo className="text-white" />
              </Link>
            }
            footer={user}
          />
        </div>
      </aside>
      <div className="min-w-0 flex-1">
        {authorize(viewer, 'incidents.read') ? (
          <header className="border-b border-slate-200 bg-white px-4 py-2 text-sm sm:px-6 lg:px-8">
            <IncidentSearch className="w-full max-w-md" />
          </header>
        ) : null}
        {/* No fixed cap: wide tables use a wide screen; text blocks cap their own measure. */}
        <main id="main" className="mx-auto max-w-[1920px] px-4 py-6 sm:px-6">
          {children}
        </main>
      </div>
    </div>
  );
}
