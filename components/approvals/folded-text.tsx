'use client';
import { useId, useState } from 'react';
import { MaskedText } from './masked-text';
import { foldText } from './argument-text';

/**
 * Long text (over 200 characters or 3 lines) folded to its start, with a button that opens and
 * closes it: a real button, so it works from the keyboard and says whether it is open.
 */
export function FoldedText({ text, what, className }: { text: string; what: string; className?: string }) {
  const id = useId();
  const [open, setOpen] = useState(false);
  const { folded, head } = foldText(text);
  const length = Array.from(text).length;
  return (
    <span className="block min-w-0">
      <span id={id} className={`block ${className ?? ''}`}>
        <MaskedText text={folded && !open ? head : text} />
        {folded && !open ? <span aria-hidden> …</span> : null}
      </span>
      {folded ? (
        <button
          type="button"
          aria-expanded={open}
          aria-controls={id}
          onClick={() => setOpen((o) => !o)}
          className="mt-1 block rounded text-xs font-medium text-indigo-700 hover:underline focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600"
        >
          {open ? `Fold ${what}` : `Show all of ${what} (${length} characters)`}
        </button>
      ) : null}
    </span>
  );
}
