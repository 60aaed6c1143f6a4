import { Badge } from '@/components/ui/card';
import { categoryLabel, deliveryHelp, deliveryLabel, outcomeTone } from '@/lib/outcomes/present';
import type { Category, Delivery } from '@/lib/outcomes/schemas';

export function DeliveryBadge({ delivery, category }: { delivery: Delivery; category: Category }) {
  return (
    <span title={deliveryHelp[delivery]} data-testid="delivery-badge">
      <Badge tone={outcomeTone(delivery, category)}>{deliveryLabel[delivery]}</Badge>
    </span>
  );
}

export function CategoryBadge({ category }: { category: Category }) {
  return <span className="font-mono text-xs text-slate-600">{categoryLabel(category)}</span>;
}
