import { describe, expect, it } from 'vitest';
import { identityConfig, IdentityConfigError, parseRoleMap } from './config';
import { roleFromClaim, principalFrom } from './roles';

const oidcEnv = {
  AUTH_OIDC_ISSUER: 'https://login.example.com/oauth2/default',
  AUTH_OIDC_CLIENT_ID: 'client',
  AUTH_OIDC_CLIENT_SECRET: 'secret',
  AUTH_OIDC_ROLE_MAP: 'cs-admins=admin,cs-reviewers=reviewer',
};

describe('parseRoleMap', () => {
  it('reads name=role pairs, trimming spaces, keeping case', () => {
    expect([...parseRoleMap(' Admins = admin , ops=support,Ops=reviewer ')]).toEqual([
      ['Admins', 'admin'],
      ['ops', 'support'],
      ['Ops', 'reviewer'],
    ]);
  });

  it('keeps an "=" inside a name (the last one separates the role)', () => {
    expect([...parseRoleMap('team=a=admin')]).toEqual([['team=a', 'admin']]);
  });

  it.each([
    ['', 'must map at least one group'],
    ['   ', 'must map at least one group'],
    ['admins', 'without "name=role": "admins"'],
    ['=admin', 'without "name=role"'],
    ['admins=owner', 'unknown role "owner"'],
    ['admins=Admin', 'unknown role "Admin"'],
    ['admins=', 'unknown role ""'],
    ['a=admin,,b=support', 'without "name=role": ""'],
    ['a=admin,a=support', 'names "a" twice'],
    [`${'x'.repeat(257)}=admin`, 'longer than 256'],
    [Array.from({ length: 201 }, (_, i) => `g${i}=support`).join(','), 'at most 200 entries'],
  ])('refuses %j naming the variable', (raw, message) => {
    expect(() => parseRoleMap(raw)).toThrow(IdentityConfigError);
    expect(() => parseRoleMap(raw)).toThrow(/^AUTH_OIDC_ROLE_MAP /);
    expect(() => parseRoleMap(raw)).toThrow(message);
  });
});

describe('identityConfig', () => {
  it('no OpenID settings: passwords only', () => {
    expect(identityConfig({})).toEqual({ oidc: null, passwordSignIn: true });
  });

  it('the defaults of docs/api.md', () => {
    const config = identityConfig(oidcEnv);
    expect(config.passwordSignIn).toBe(true);
    expect(config.oidc).toMatchObject({
      issuer: 'https://login.example.com/oauth2/default',
      name: 'Single sign-on',
      rolesClaim: 'groups',
      principalClaim: 'email',
    });
    expect(config.oidc?.roleMap.get('cs-reviewers')).toBe('reviewer');
  });

  it('reads every variable', () => {
    const config = identityConfig({
      ...oidcEnv,
      AUTH_OIDC_NAME: 'Okta',
      AUTH_OIDC_ROLES_CLAIM: 'roles',
      AUTH_OIDC_PRINCIPAL_CLAIM: 'preferred_username',
      AUTH_PASSWORD_SIGN_IN: 'OFF',
    });
    expect(config.passwordSignIn).toBe(false);
    expect(config.oidc).toMatchObject({ name: 'Okta', rolesClaim: 'roles', principalClaim: 'preferred_username' });
  });

  it('http only on loopback', () => {
    expect(identityConfig({ ...oidcEnv, AUTH_OIDC_ISSUER: 'http://127.0.0.1:4000' }).oidc?.issuer).toBe(
      'http://127.0.0.1:4000',
    );
  });

  it.each([
    [{ AUTH_PASSWORD_SIGN_IN: 'no' }, 'AUTH_PASSWORD_SIGN_IN must be "on" or "off"'],
    [{ AUTH_PASSWORD_SIGN_IN: 'off' }, 'AUTH_PASSWORD_SIGN_IN is off but AUTH_OIDC_ISSUER is not set'],
    [{ AUTH_OIDC_ROLE_MAP: 'a=admin' }, 'AUTH_OIDC_ROLE_MAP is set but AUTH_OIDC_ISSUER is not'],
    [{ ...oidcEnv, AUTH_OIDC_CLIENT_SECRET: '' }, 'AUTH_OIDC_CLIENT_SECRET is required'],
    [{ AUTH_OIDC_CLIENT_ID: 'x' }, 'AUTH_OIDC_ISSUER is required when AUTH_OIDC_CLIENT_ID is set'],
    [{ ...oidcEnv, AUTH_OIDC_ISSUER: 'login.example.com' }, 'AUTH_OIDC_ISSUER must be a URL'],
    [{ ...oidcEnv, AUTH_OIDC_ISSUER: 'http://login.example.com' }, 'AUTH_OIDC_ISSUER must be an https URL'],
    [{ ...oidcEnv, AUTH_OIDC_ISSUER: 'https://x.example/?a=1' }, 'AUTH_OIDC_ISSUER must not carry a query'],
    [{ ...oidcEnv, AUTH_OIDC_ROLE_MAP: undefined }, 'AUTH_OIDC_ROLE_MAP must map at least one group'],
    [{ ...oidcEnv, AUTH_OIDC_ROLE_MAP: 'a=root' }, 'AUTH_OIDC_ROLE_MAP gives "a" the unknown role "root"'],
    [{ ...oidcEnv, AUTH_OIDC_ROLES_CLAIM: 'has space' }, 'AUTH_OIDC_ROLES_CLAIM must be a claim name'],
    [{ ...oidcEnv, AUTH_OIDC_PRINCIPAL_CLAIM: '1abc' }, 'AUTH_OIDC_PRINCIPAL_CLAIM must be a claim name'],
    [{ ...oidcEnv, AUTH_OIDC_NAME: 'x'.repeat(61) }, 'AUTH_OIDC_NAME must be at most 60'],
  ])('refuses %j', (env, message) => {
    expect(() => identityConfig(env)).toThrow(IdentityConfigError);
    expect(() => identityConfig(env)).toThrow(message);
  });
});

describe('roleFromClaim', () => {
  const map = parseRoleMap('admins=admin,reviewers=reviewer,helpdesk=support,ops=support');
  it.each([
    [['helpdesk'], { role: 'support', matched: ['helpdesk'] }],
    [['helpdesk', 'admins', 'reviewers'], { role: 'admin', matched: ['admins', 'helpdesk', 'reviewers'] }],
    [['reviewers', 'ops', 'unrelated'], { role: 'reviewer', matched: ['ops', 'reviewers'] }],
    ['reviewers', { role: 'reviewer', matched: ['reviewers'] }],
    [['reviewers', 'reviewers'], { role: 'reviewer', matched: ['reviewers'] }],
    [['Admins'], null],
    [['unrelated'], null],
    [[], null],
    [undefined, null],
    [{ admins: true }, null],
    [[42, null, 'helpdesk'], { role: 'support', matched: ['helpdesk'] }],
  ])('%j → %j', (claim, expected) => {
    expect(roleFromClaim(claim, map)).toEqual(expected);
  });
});

describe('principalFrom', () => {
  it.each([
    ['ada@example.com', 'ada@example.com'],
    [' ada ', 'ada'],
    [12345, '12345'],
    ['', null],
    [undefined, null],
    [['a'], null],
    ['x'.repeat(321), null],
  ])('%j → %j', (claim, expected) => expect(principalFrom(claim)).toBe(expected));
});
