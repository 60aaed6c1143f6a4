// Sign-in configuration from the environment (docs/configuration.md "Sign-in configuration"). Pure: the
// configuration schema (lib/config) runs it over the variables it is given, once; lib/server/auth/auth.ts
// reads the result when Auth.js is configured.
import { roles, type Role } from '@/lib/auth/permissions';

export type OidcConfig = {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The sign-in button's label. */
  name: string;
  rolesClaim: string;
  principalClaim: string;
  /** Group or role name at the provider → the console role it gives. */
  roleMap: ReadonlyMap<string, Role>;
};

export type IdentityConfig = { oidc: OidcConfig | null; passwordSignIn: boolean };

/** A bad sign-in setting; the message names the variable. */
export class IdentityConfigError extends Error {}

const bad = (name: string, message: string) => new IdentityConfigError(`${name} ${message}`);
const MAX_ENTRIES = 200;
const CLAIM = /^[A-Za-z_][\w.:-]{0,99}$/;

/** `name=role,…`: names are case-sensitive and unique; a role is admin, reviewer or support. */
export function parseRoleMap(raw: string | undefined, name = 'AUTH_OIDC_ROLE_MAP'): Map<string, Role> {
  const map = new Map<string, Role>();
  if (raw === undefined || raw.trim() === '') throw bad(name, 'must map at least one group to a role (name=role,…)');
  const entries = raw.split(',');
  if (entries.length > MAX_ENTRIES) throw bad(name, `may hold at most ${MAX_ENTRIES} entries`);
  for (const entry of entries) {
    const at = entry.lastIndexOf('=');
    const group = (at < 0 ? entry : entry.slice(0, at)).trim();
    const role = at < 0 ? '' : entry.slice(at + 1).trim();
    if (at < 0 || group === '') throw bad(name, `has an entry without "name=role": "${entry.trim()}"`);
    if (group.length > 256) throw bad(name, 'has a name longer than 256 characters');
    if (!(roles as readonly string[]).includes(role))
      throw bad(name, `gives "${group}" the unknown role "${role}" (admin, reviewer or support)`);
    if (map.has(group)) throw bad(name, `names "${group}" twice`);
    map.set(group, role as Role);
  }
  return map;
}

function claimName(env: Record<string, string | undefined>, name: string, fallback: string): string {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!CLAIM.test(raw)) throw bad(name, `must be a claim name (letters, digits, _ . : -), got "${raw}"`);
  return raw;
}

function issuerUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw bad('AUTH_OIDC_ISSUER', `must be a URL (got "${raw}")`);
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw bad('AUTH_OIDC_ISSUER', 'must be an https URL (http only on loopback)');
  if (url.search || url.hash) throw bad('AUTH_OIDC_ISSUER', 'must not carry a query or fragment');
  return raw.trim();
}

/** The settings the environment gives; throws IdentityConfigError naming the variable on a bad value. */
export function identityConfig(env: Record<string, string | undefined>): IdentityConfig {
  const passwordRaw = (env.AUTH_PASSWORD_SIGN_IN ?? '').trim().toLowerCase();
  if (!['', 'on', 'off'].includes(passwordRaw))
    throw bad('AUTH_PASSWORD_SIGN_IN', `must be "on" or "off" (got "${env.AUTH_PASSWORD_SIGN_IN}")`);
  const passwordSignIn = passwordRaw !== 'off';

  const required = ['AUTH_OIDC_ISSUER', 'AUTH_OIDC_CLIENT_ID', 'AUTH_OIDC_CLIENT_SECRET'] as const;
  const given = required.filter((n) => env[n]?.trim());
  if (given.length === 0) {
    if (!passwordSignIn)
      throw bad('AUTH_PASSWORD_SIGN_IN', 'is off but AUTH_OIDC_ISSUER is not set: nobody could sign in');
    if (env.AUTH_OIDC_ROLE_MAP?.trim()) throw bad('AUTH_OIDC_ROLE_MAP', 'is set but AUTH_OIDC_ISSUER is not');
    return { oidc: null, passwordSignIn };
  }
  const missing = required.find((n) => !env[n]?.trim());
  if (missing) throw bad(missing, `is required when ${given[0]} is set`);
  const name = env.AUTH_OIDC_NAME?.trim() || 'Single sign-on';
  if (name.length > 60) throw bad('AUTH_OIDC_NAME', 'must be at most 60 characters');
  return {
    passwordSignIn,
    oidc: {
      issuer: issuerUrl(env.AUTH_OIDC_ISSUER!),
      clientId: env.AUTH_OIDC_CLIENT_ID!.trim(),
      clientSecret: env.AUTH_OIDC_CLIENT_SECRET!.trim(),
      name,
      rolesClaim: claimName(env, 'AUTH_OIDC_ROLES_CLAIM', 'groups'),
      principalClaim: claimName(env, 'AUTH_OIDC_PRINCIPAL_CLAIM', 'email'),
      roleMap: parseRoleMap(env.AUTH_OIDC_ROLE_MAP),
    },
  };
}
