'use client';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { PendingBadge } from '@/components/approvals/pending-badge';

export type NavItem = { href: string; label: string; pendingApprovals?: number };

export function Nav({ items }: { items: NavItem[] }) {
  const pathname = usePathname();
  return (
    <nav aria-label="Main" className="flex gap-1 overflow-x-auto md:flex-col">
      {items.map((item) => {
        const active =
          item.href === '/' ? pathname === '/' : pathname === item.href || pathname.startsWith(item.href + '/');
        return (
          <Link
            key={item.href}
            href={item.href}
            aria-current={active ? 'page' : undefined}
            className={`flex items-center gap-2 whitespace-nowrap rounded-md px-3 py-2 text-sm font-medium transition-colors ${active ? 'bg-slate-800 text-white' : 'text-slate-300 hover:bg-slate-800/60 hover:text-white'}`}
          >
            {item.label}
            {item.pendingApprovals !== undefined ? <PendingBadge initial={item.pendingApprovals} /> : null}
          </Link>
        );
      })}
    </nav>
  );
}
