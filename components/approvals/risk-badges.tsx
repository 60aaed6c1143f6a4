import { Badge } from '@/components/ui/card';
import { riskOf } from '@/lib/approvals/present';
import type { ToolAnnotations } from '@/lib/outcomes/schemas';

const tone = { high: 'bad', medium: 'warn', low: 'good' } as const;

export function RiskBadges({ annotations, trusted }: { annotations: ToolAnnotations | null; trusted: boolean }) {
  const risk = riskOf(annotations, trusted);
  return (
    <span className="flex flex-wrap items-center gap-1" data-testid="risk">
      <Badge tone={tone[risk.level]}>{risk.level} risk</Badge>
      {risk.traits.map((t) => (
        <span key={t} className="text-xs text-slate-500">
          {t}
        </span>
      ))}
    </span>
  );
}
