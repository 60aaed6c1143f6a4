// The parsers of docs/configuration.md's kinds of value (a number, a port, a URL, a switch…), each
// a zod entry of ./schema.ts: unset and empty (or blank) are the same, and a refusal names the
// value and what the variable accepts.
import { z } from 'zod';

type Raw = string | undefined;

export const blank = (raw: Raw): raw is undefined => raw === undefined || raw.trim() === '';
const quoted = (raw: string) => JSON.stringify(raw.length > 80 ? `${raw.slice(0, 80)}…` : raw);

/** Text taken as given: trimmed, unless `exact` (secrets and connection strings are used as typed). */
export function text(options: { exact?: boolean } = {}) {
  return z
    .string()
    .optional()
    .transform((raw) => (blank(raw) ? undefined : options.exact ? raw : raw.trim()));
}

/** A number by Number()'s reading (as the code before this schema read it); `whole` refuses fractions. */
export function number<D extends number | undefined>(o: {
  /** What the value counts, e.g. "milliseconds"; or `what`, the whole phrase ("a port number"). */
  unit?: string;
  what?: string;
  whole: boolean;
  min: number;
  max?: number;
  default: D;
  /** How the default reads in the message, when it is not the number itself. */
  defaultText?: string;
}) {
  const range = o.max === undefined ? `≥ ${o.min}` : `from ${o.min} to ${o.max}`;
  const what = o.what ?? `${o.whole ? 'a whole number' : 'a number'} of ${o.unit}`;
  const expected = `expected ${what} ${range} (default ${o.defaultText ?? o.default})`;
  return z
    .string()
    .optional()
    .transform((raw, ctx): number | D => {
      if (blank(raw)) return o.default;
      const n = Number(raw.trim());
      const wrong = !Number.isFinite(n)
        ? 'is not a number'
        : o.whole && !Number.isSafeInteger(n)
          ? 'is not a whole number'
          : n < o.min
            ? `is below ${o.min}`
            : o.max !== undefined && n > o.max
              ? `is above ${o.max}`
              : null;
      if (!wrong) return n;
      ctx.addIssue({ code: 'custom', message: `${quoted(raw)} ${wrong}; ${expected}` });
      return z.NEVER;
    });
}

/** A port number, kept as text: it is handed to `next start -p` and written into addresses. */
export function port(defaultText: string) {
  const check = number({ what: 'a port number', whole: true, min: 0, max: 65535, default: undefined, defaultText });
  return z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const parsed = check.safeParse(raw);
      if (parsed.success) return blank(raw) ? undefined : raw.trim();
      ctx.addIssue({ code: 'custom', message: parsed.error.issues[0].message });
      return z.NEVER;
    });
}

/** An absolute http(s) URL, kept as text (trimmed). */
export function httpUrl(example: string) {
  return z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (blank(raw)) return undefined;
      const value = raw.trim();
      let ok = false;
      try {
        ok = ['http:', 'https:'].includes(new URL(value).protocol);
      } catch {
        // not a URL: refused below
      }
      if (ok) return value;
      ctx.addIssue({ code: 'custom', message: `${quoted(raw)} is not an http(s) URL; expected e.g. ${example}` });
      return z.NEVER;
    });
}

/** `1` on, `0` (or unset) off. */
export function onOff(what: string) {
  return z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (blank(raw)) return false;
      if (raw.trim() === '1') return true;
      if (raw.trim() === '0') return false;
      ctx.addIssue({ code: 'custom', message: `${quoted(raw)} is not 1 or 0; expected 1 (${what}) or 0 (default 0)` });
      return z.NEVER;
    });
}

/** On when set to anything at all (a debugging switch). */
export const anyValue = () =>
  z
    .string()
    .optional()
    .transform((raw) => !blank(raw));

/** One of the domain parsers (lib/…), whose errors already name the variable. */
export function parsedBy<T>(parse: (raw: Raw) => T) {
  return z
    .string()
    .optional()
    .transform((raw, ctx): T => {
      try {
        return parse(raw);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    });
}

/** `on` or `off`, in any case. */
export function onOrOff(fallback: boolean) {
  const expected = `expected on or off (default ${fallback ? 'on' : 'off'})`;
  return z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (blank(raw)) return fallback;
      const value = raw.trim().toLowerCase();
      if (value === 'on' || value === 'off') return value === 'on';
      ctx.addIssue({ code: 'custom', message: `${quoted(raw)} is not on or off; ${expected}` });
      return z.NEVER;
    });
}
