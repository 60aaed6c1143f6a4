'use client';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { useState, type ReactNode } from 'react';
import { PendingBadge } from '@/components/approvals/pending-badge';
import { cn } from '@/components/ui/cn';

export type NavItem = { href: string; label: string; pendingApprovals?: number };

const isActive = (href: string, pathname: string) =>
  href === '/' ? pathname === '/' : pathname === href || pathname.startsWith(href + '/');

/**
 * The main navigation, rendered once: a column in the sidebar from md up; below md a "Menu"
 * button in the top bar opens the full list (no row of items cut off at the screen's edge).
 */
export function Nav({ items, brand, footer }: { items: NavItem[]; brand: ReactNode; footer?: ReactNode }) {
  const pathname = usePathname();
  // Open on the page it was opened on: following a link closes it (the layout stays mounted).
  const [openOn, setOpenOn] = useState<string | null>(null);
  const open = openOn === pathname;
  const current = items.find((i) => isActive(i.href, pathname));
  return (
    <>
      <div className="flex items-center justify-between gap-3 px-4 py-3 md:py-4">
        {brand}
        <button
          type="button"
          className="inline-flex items-center gap-2 rounded-md px-3 py-1.5 text-sm font-medium text-slate-100 ring-1 ring-slate-700 hover:bg-slate-800 md:hidden"
          aria-expanded={open}
          aria-controls="main-nav"
          onClick={() => setOpenOn(open ? null : pathname)}
          data-testid="menu-button"
        >
          <svg aria-hidden viewBox="0 0 20 20" className="h-4 w-4" fill="currentColor">
            {open ? (
              <path d="M5.3 4.3a1 1 0 0 0-1.4 1.4L8.6 10l-4.7 4.3a1 1 0 1 0 1.4 1.4L10 11.4l4.7 4.3a1 1 0 0 0 1.4-1.4L11.4 10l4.7-4.3a1 1 0 0 0-1.4-1.4L10 8.6 5.3 4.3Z" />
            ) : (
              <path d="M3 5h14a1 1 0 1 0 0-2H3a1 1 0 0 0 0 2Zm14 4H3a1 1 0 0 0 0 2h14a1 1 0 1 0 0-2Zm0 6H3a1 1 0 0 0 0 2h14a1 1 0 1 0 0-2Z" />
            )}
          </svg>
          {open ? 'Close' : 'Menu'}
          {!open && current && current.href !== '/' ? (
            <span className="sr-only">, current page {current.label}</span>
          ) : null}
        </button>
      </div>
      <div className={cn('px-3 pb-3 md:block md:flex-1 md:overflow-y-auto', open ? 'block' : 'hidden')}>
        <nav id="main-nav" aria-label="Main" className="flex flex-col gap-0.5">
          {items.map((item) => {
            const active = isActive(item.href, pathname);
            return (
              <Link
                key={item.href}
                href={item.href}
                aria-current={active ? 'page' : undefined}
                className={cn(
                  'flex items-center gap-2 whitespace-nowrap rounded-md px-3 py-2 text-sm font-medium transition-colors focus-visible:outline-2 focus-visible:outline-offset-[-2px] focus-visible:outline-indigo-400',
                  active ? 'bg-slate-800 text-white' : 'text-slate-300 hover:bg-slate-800/60 hover:text-white',
                )}
              >
                {item.label}
                {item.pendingApprovals !== undefined ? <PendingBadge initial={item.pendingApprovals} /> : null}
              </Link>
            );
          })}
        </nav>
      </div>
      {footer ? <div className={cn('md:block', open ? 'block' : 'hidden')}>{footer}</div> : null}
    </>
  );
}
