import Form from 'next/form';

/**
 * The header search: a GET form, so it works before any script has loaded; once they have, next/form
 * makes the search a client navigation: no new document, no scripts loaded and run again.
 */
export function IncidentSearch({
  id = 'incident-search',
  defaultValue = '',
  className = '',
}: {
  id?: string;
  defaultValue?: string;
  className?: string;
}) {
  return (
    <Form action="/incidents" role="search" className={className}>
      <label htmlFor={id} className="sr-only">
        Find an incident by request reference, idempotency key, event id, approval id or grant id
      </label>
      <input
        id={id}
        name="q"
        type="search"
        defaultValue={defaultValue}
        maxLength={255}
        placeholder="Find incident: req_…, key, event, approval or grant id"
        className="block w-full rounded-md border-0 bg-white px-3 py-1.5 text-sm text-slate-900 shadow-xs ring-1 ring-inset ring-slate-300 placeholder:text-slate-400 focus:ring-2 focus:ring-indigo-500"
      />
    </Form>
  );
}
