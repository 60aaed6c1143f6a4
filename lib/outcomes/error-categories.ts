// The error categories a tool may declare for itself (docs/design.md: "a structured error category the
// tool itself declares"), and the spellings read as each. Pure.
/** Categories a tool (or an SDK folding a protocol error) may declare for itself. */
export type DeclaredCategory =
  'validation' | 'forbidden' | 'denied' | 'not_found' | 'conflict' | 'unavailable' | 'rate_limited' | 'unknown_tool';

// Spellings seen in the wild, after normalisation. Only categories that promise the call had
// no effect belong here: e.g. UPSTREAM_TIMEOUT is absent on purpose, because a timed-out
// upstream may have acted; it stays an uncategorised (uncertain) tool error.
const SPELLINGS = new Map<string, DeclaredCategory>([
  ...spell(
    'validation',
    'validation',
    'validation_error',
    'validation_failed',
    'invalid',
    'invalid_input',
    'invalid_argument',
    'invalid_arguments',
    'invalid_params',
    'bad_request',
  ),
  ...spell(
    'forbidden',
    'forbidden',
    'permission_denied',
    'access_denied',
    'insufficient_scope',
    'insufficient_permission',
    'insufficient_permissions',
  ),
  ...spell('denied', 'denied', 'denied_by_policy', 'policy_denied'),
  ...spell('not_found', 'not_found', 'notfound', 'resource_not_found'),
  ...spell(
    'conflict',
    'conflict',
    'revision_conflict',
    'version_conflict',
    'edit_conflict',
    'precondition_failed',
    'concurrent_modification',
  ),
  ...spell(
    'unavailable',
    'unavailable',
    'retryable_upstream',
    'upstream_unavailable',
    'service_unavailable',
    'temporarily_unavailable',
  ),
  ...spell(
    'rate_limited',
    'rate_limited',
    'ratelimited',
    'rate_limit',
    'rate_limit_exceeded',
    'too_many_requests',
    'throttled',
  ),
  ...spell('unknown_tool', 'unknown_tool', 'tool_not_found', 'no_such_tool'),
]);

function spell(category: DeclaredCategory, ...names: string[]): [string, DeclaredCategory][] {
  return names.map((name) => [name, category]);
}

/**
 * Maps a declared error category to ours: case-insensitive, camelCase split, and any run of
 * separators ('-', ' ', '.', '/', …) read as '_'. Unrecognised or empty: null (no category).
 */
export function normalizeErrorCategory(raw: string | null | undefined): DeclaredCategory | null {
  if (!raw) return null;
  const key = raw
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');
  return SPELLINGS.get(key) ?? null;
}
