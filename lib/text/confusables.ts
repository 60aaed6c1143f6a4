// Lookalike folding for names a person reads: argument keys, and tool names. Two names with the
// same skeleton look alike on screen, so a check on a name (is it a secret's name? is it a tool we
// know?) runs on its skeleton, and names that share one can be pointed out.
//
// In the spirit of Unicode's confusable skeletons (UTS #39), kept small and hand-written: NFKC
// (fullwidth and mathematical letters and digits, ligatures), case folding, no combining marks and
// no invisible characters (zero-width spaces and joiners, bidi controls, variation selectors: the
// Default_Ignorable_Code_Point property), and a table of the Cyrillic and Greek letters that are
// drawn like Latin letters or digits in common fonts. ASCII is left as it is: "l" and "1", "O" and
// "0", "rn" and "m" are different keys a person types on purpose ("item1", "iteml").
//
// Keys that differ only in case share a skeleton too: on a reviewer's screen "Amount" and
// "amount" are as easy to mix up as any lookalike.

// Each pair: lookalikes, and under each the Latin letter or digit it is drawn like. Capitals are
// listed apart because some are drawn like a Latin capital while their small letter is not (Н, н).
const PAIRS: [string, string][] = [
  ['АВСЕНІЈКМОРЅТХУҮԚԜӀЗ', 'ABCEHIJKMOPSTXYYQWl3'], // Cyrillic capitals
  ['асԁеһіјкӏорԛѕԝхуүзб', 'acdehijklopqswxyy36'], // Cyrillic small letters
  ['ΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹͿ', 'ABEZHIKMNOPTYXCJ'], // Greek capitals
  ['αγικνορυχϲϳ', 'ayikvopuxcj'], // Greek small letters
  ['ıȷɑɡɩʏ', 'ijagiy'], // Latin letters outside ASCII that NFKC leaves alone
];

const LOOKALIKES = new Map<string, string>();
for (const [from, to] of PAIRS) {
  const chars = [...from];
  if (chars.length !== to.length) throw new Error(`confusables: ${from} and ${to} differ in length`);
  chars.forEach((c, i) => LOOKALIKES.set(c, to[i]));
}

const LOOKALIKE_PATTERN = new RegExp(`[${[...LOOKALIKES.keys()].join('')}]`, 'gu');
const INVISIBLE_OR_MARK = /[\p{M}\p{Default_Ignorable_Code_Point}]/gu;

const unlookalike = (s: string) => s.replace(LOOKALIKE_PATTERN, (c) => LOOKALIKES.get(c) ?? c);

/**
 * The form two names share when they look alike: NFKC, lookalikes mapped to Latin, case folded,
 * accents and invisible characters removed. `skeleton("Раypal") === skeleton("paypal")`.
 */
export function skeleton(s: string): string {
  // Lookalikes before case folding (a Cyrillic capital folds to a small letter that may not look
  // Latin), and again after it and after accents go (Ӓ becomes а only then).
  let out = unlookalike(s.normalize('NFKC'));
  // Upper then lower: full case folding's effect on letters (ß and ẞ become ss, ς becomes σ).
  out = out.toUpperCase().toLowerCase();
  out = out.normalize('NFD').replace(INVISIBLE_OR_MARK, '');
  return unlookalike(out).normalize('NFC');
}

/**
 * Groups of at least two distinct names with the same skeleton, each group in the order its
 * names first appear, groups in the order of their first name. Repeats of one name are not a group.
 */
export function lookalikeGroups(keys: readonly string[]): string[][] {
  const bySkeleton = new Map<string, string[]>();
  for (const key of keys) {
    const folded = skeleton(key);
    const group = bySkeleton.get(folded);
    if (!group) bySkeleton.set(folded, [key]);
    else if (!group.includes(key)) group.push(key);
  }
  return [...bySkeleton.values()].filter((group) => group.length >= 2);
}
