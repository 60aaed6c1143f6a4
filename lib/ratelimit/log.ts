// Client-chosen text in a log line. Without a proxy in front, X-Forwarded-For is whatever the
// client sends: a line break would forge a log line, a bidirectional override would make the line
// read other than it is, and a long value would swamp the log.

/** Longest client address logged, in characters; a real one (IPv6 with a zone) is well under. */
export const LOGGED_ADDRESS_MAX = 64;

// Control characters (C0, DEL, C1, line breaks included), Unicode format characters (bidi
// overrides, zero-width), the line and paragraph separators, and unpaired surrogates.
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

/** `raw` safe to put in a log line: unsafe characters as `?`, at most `max` characters (`…` marks a cut). */
export function loggable(raw: string, max = LOGGED_ADDRESS_MAX): string {
  const chars = Array.from(raw.replace(UNSAFE, '?')); // code points: a cut never splits a pair
  return chars.length <= max ? chars.join('') : `${chars.slice(0, max - 1).join('')}…`;
}
