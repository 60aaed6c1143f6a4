// A queue row's view of a request's arguments (docs/design.md "What a reviewer sees: what will
// run"): the preview fields as compact `key: value` chips that wrap and truncate, never widening the
// row; or, when the agent sent none, a warning that approving trusts its description.
import type { PreviewField } from '@/lib/approvals/arguments-format';
import { MaskedText } from './masked-text';

export function ArgumentChips({ preview, sent }: { preview: PreviewField[] | null; sent: boolean }) {
  if (!sent)
    return (
      <span
        data-testid="queue-no-arguments"
        className="mt-1 inline-flex max-w-full items-center gap-1 rounded-md bg-amber-50 px-1.5 py-0.5 text-xs font-medium text-amber-900 ring-1 ring-inset ring-amber-300"
      >
        <span aria-hidden>⚠</span>
        <span className="sr-only">Warning: </span>
        <span className="truncate">No arguments sent: only the agent’s description</span>
      </span>
    );
  if (!preview?.length) return null;
  // One element per chip and one for its key: a queue paints 200 rows of them. The chip itself
  // truncates its value (CSS, no measuring); the key truncates apart, so a long key leaves room.
  return (
    <ul aria-label="Arguments" data-testid="queue-arguments" className="mt-1 flex min-w-0 flex-wrap gap-1">
      {preview.map((f, i) => (
        <li
          key={i}
          title={`${f.key}: ${f.value} (${f.type})`}
          data-type={f.type}
          className="min-w-0 max-w-full truncate rounded-md bg-slate-100 px-1.5 py-0.5 font-mono text-xs text-slate-800"
        >
          <span className="inline-block max-w-[18ch] truncate align-bottom text-slate-600">{`${f.key}:`}</span>{' '}
          {f.type === 'string' && f.value === '' ? (
            <span className="italic text-slate-600">empty</span>
          ) : f.value.includes('[masked:') ? (
            <MaskedText text={f.value} />
          ) : (
            f.value
          )}
        </li>
      ))}
    </ul>
  );
}
