import Link from 'next/link';
import { Badge } from '@/components/ui/card';
import { findingLabel } from '@/lib/incidents/findings';
import type { Finding } from '@/lib/incidents/types';

const tone = { high: 'bad', medium: 'warn', low: 'neutral' } as const;

export function FindingCard({ finding, position }: { finding: Finding; position: (id: string) => number }) {
  return (
    <li className="rounded-md p-3 ring-1 ring-slate-200" data-testid={`finding-${finding.kind}`}>
      <div className="flex flex-wrap items-center gap-2">
        <Badge tone={tone[finding.severity]}>{finding.severity}</Badge>
        <span className="text-sm font-semibold text-slate-900">{findingLabel[finding.kind]}</span>
      </div>
      <p className="mt-1 text-sm text-slate-700">{finding.explanation}</p>
      <p className="mt-1 text-xs text-slate-500">
        Records:{' '}
        {finding.recordIds.map((id, i) => (
          <span key={id}>
            {i ? ', ' : ''}
            <Link href={`#record-${id}`} className="text-indigo-700 underline underline-offset-2">
              #{position(id)}
            </Link>
          </span>
        ))}
      </p>
    </li>
  );
}
