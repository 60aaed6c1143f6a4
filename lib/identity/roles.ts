// From a person's claims to their console role. Pure.
import type { Role } from '@/lib/auth/permissions';

const strength: Record<Role, number> = { support: 1, reviewer: 2, admin: 3 };

/** The claim's names: an array of strings, or one string; anything else holds none. */
export function claimValues(claim: unknown): string[] {
  if (typeof claim === 'string') return [claim];
  if (Array.isArray(claim)) return claim.filter((v): v is string => typeof v === 'string').slice(0, 1000);
  return [];
}

export type RoleMatch = { role: Role; matched: string[] };

/** The strongest role any of the names maps to (admin > reviewer > support), and the names that matched; none: null. */
export function roleFromClaim(claim: unknown, roleMap: ReadonlyMap<string, Role>): RoleMatch | null {
  const matched = [...new Set(claimValues(claim).filter((v) => roleMap.has(v)))].sort();
  if (matched.length === 0) return null;
  const role = matched.map((v) => roleMap.get(v)!).reduce((a, b) => (strength[b] > strength[a] ? b : a));
  return { role, matched };
}

/** A claim that is the principal: a non-empty string (or number) of reasonable length; otherwise null. */
export function principalFrom(claim: unknown): string | null {
  const value = typeof claim === 'number' ? String(claim) : claim;
  return typeof value === 'string' && value.trim() !== '' && value.length <= 320 ? value.trim() : null;
}
