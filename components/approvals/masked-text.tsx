import { maskedParts } from './argument-text';

/** Text whose `[masked:kind]` placeholders stand apart: muted, so no one reads them as the value. */
export function MaskedText({ text }: { text: string }) {
  return (
    <>
      {maskedParts(text).map((p, i) =>
        p.masked ? (
          <span
            key={i}
            data-masked
            title="Masked before it was stored"
            className="rounded bg-slate-100 px-1 italic text-slate-600 ring-1 ring-inset ring-slate-200"
          >
            {p.text}
          </span>
        ) : (
          p.text
        ),
      )}
    </>
  );
}
