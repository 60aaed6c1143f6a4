import 'server-only';
import type { OIDCConfig } from 'next-auth/providers';
import type { Profile } from 'next-auth';
import { emailSchema } from '@/lib/users/schemas';
import type { OidcConfig } from '@/lib/identity/config';
import { principalFrom, roleFromClaim } from '@/lib/identity/roles';
import { scheduler } from '@/lib/auth/actor';
import { signInWithSso, type SsoOutcome } from '../users/users-sso';

/** Why an SSO sign-in was refused (the /sign-in/refused page explains each). */
export type SsoRefusal = 'no_role' | 'no_email' | 'no_principal' | 'disabled' | 'conflict' | 'invalid';

/** Auth.js's own OIDC support: issuer from discovery, authorization code with PKCE, state and nonce checked. */
export function oidcProvider(config: OidcConfig): OIDCConfig<Profile> {
  return {
    id: 'oidc',
    name: config.name,
    type: 'oidc',
    issuer: config.issuer,
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    checks: ['pkce', 'state', 'nonce'],
    authorization: { params: { scope: 'openid email profile' } },
    // The ID token's claims (idToken defaults to true for OIDC): nothing else is trusted.
    profile: (p) => ({ id: String(p.sub), email: typeof p.email === 'string' ? p.email : null, name: p.name ?? null }),
  };
}

/** From the verified claims to a person, or a reason for refusing; only the claim values used are kept. */
export async function ssoSignIn(
  config: OidcConfig,
  profile: Profile,
): Promise<{ ok: true; userId: string } | { ok: false; reason: SsoRefusal }> {
  const claims = profile as Record<string, unknown>;
  const email = emailSchema.safeParse(claims.email);
  if (!email.success) return { ok: false, reason: 'no_email' };
  const match = roleFromClaim(claims[config.rolesClaim], config.roleMap);
  if (!match) return { ok: false, reason: 'no_role' };
  const principal = principalFrom(claims[config.principalClaim]);
  if (!principal) return { ok: false, reason: 'no_principal' };
  if (typeof claims.sub !== 'string' || !claims.sub) return { ok: false, reason: 'invalid' };
  const issuer = typeof claims.iss === 'string' ? claims.iss : config.issuer;
  const name = typeof claims.name === 'string' && claims.name.trim() ? claims.name.trim().slice(0, 200) : email.data;
  const outcome: SsoOutcome = await signInWithSso(scheduler, {
    subject: `${issuer} ${claims.sub}`,
    email: email.data,
    name,
    principal,
    role: match.role,
    roleClaims: match.matched,
  });
  return outcome;
}
