import Link from 'next/link';
import { Button } from '@/components/ui/button';
import { Input, Select } from '@/components/ui/field';
import { boundaryLabel, categoryLabel, deliveryLabel, retryLabel } from '@/lib/outcomes/present';
import { boundaries, categories, deliveries, retryValues } from '@/lib/outcomes/schemas';

type Values = Record<string, string | undefined>;

function Text({
  name,
  label,
  values,
  placeholder,
}: {
  name: string;
  label: string;
  values: Values;
  placeholder?: string;
}) {
  return (
    <label className="block text-xs font-medium text-slate-600">
      {label}
      <Input name={name} defaultValue={values[name] ?? ''} placeholder={placeholder} className="mt-1 py-1.5" />
    </label>
  );
}

function Choice({
  name,
  label,
  values,
  options,
}: {
  name: string;
  label: string;
  values: Values;
  options: [string, string][];
}) {
  return (
    <label className="block text-xs font-medium text-slate-600">
      {label}
      <Select name={name} defaultValue={values[name] ?? ''} className="mt-1 py-1.5">
        <option value="">Any</option>
        {options.map(([v, l]) => (
          <option key={v} value={v}>
            {l}
          </option>
        ))}
      </Select>
    </label>
  );
}

/** A plain GET form: every filter lives in the URL, so a view can be shared or bookmarked. */
export function OutcomeFilters({ values }: { values: Values }) {
  return (
    <form
      method="get"
      action="/outcomes"
      className="rounded-lg bg-white p-4 shadow-xs ring-1 ring-slate-200"
      aria-label="Filter outcomes"
    >
      <div className="grid gap-3 sm:grid-cols-2 lg:grid-cols-4">
        <Text name="requestRef" label="Request reference" values={values} placeholder="req_…" />
        <Choice
          name="delivery"
          label="Delivery"
          values={values}
          options={deliveries.map((d) => [d, deliveryLabel[d]])}
        />
        <Choice
          name="category"
          label="Category"
          values={values}
          options={categories.map((c) => [c, categoryLabel(c)])}
        />
        <Choice name="retry" label="Retry" values={values} options={retryValues.map((r) => [r, retryLabel[r]])} />
        <Choice
          name="boundary"
          label="Boundary"
          values={values}
          options={boundaries.map((b) => [b, boundaryLabel[b]])}
        />
        <Choice
          name="readOnly"
          label="Kind"
          values={values}
          options={[
            ['false', 'Writes'],
            ['true', 'Trusted reads'],
          ]}
        />
        <Choice
          name="resolution"
          label="Unknowns"
          values={values}
          options={[
            ['unresolved', 'Unresolved: check before repeating'],
            ['resolved', 'Resolved (later record or state check)'],
          ]}
        />
        <Text name="tool" label="Tool" values={values} />
        <Text name="server" label="Server" values={values} />
        <Text name="organization" label="Organization" values={values} />
        <Text name="principal" label="Principal" values={values} />
        <label className="block text-xs font-medium text-slate-600">
          From (UTC)
          <Input
            type="datetime-local"
            name="from"
            defaultValue={values.from?.slice(0, 16) ?? ''}
            className="mt-1 py-1.5"
          />
        </label>
        <label className="block text-xs font-medium text-slate-600">
          To (UTC)
          <Input type="datetime-local" name="to" defaultValue={values.to?.slice(0, 16) ?? ''} className="mt-1 py-1.5" />
        </label>
      </div>
      <div className="mt-4 flex items-center gap-3">
        <Button type="submit" size="sm">
          Apply filters
        </Button>
        <Link href="/outcomes" className="text-sm font-medium text-slate-600 hover:text-slate-900">
          Clear
        </Link>
      </div>
    </form>
  );
}
