// A real OpenID provider for the SSO specs: `oidc-provider` in this process on loopback, with test
// accounts whose groups a test can change, and knobs to make it misbehave the way a hostile or
// broken provider could (an ID token for another audience or issuer, a wrong nonce, short-lived
// codes). The tampered ID tokens are signed with the provider's real key, so only the console's
// own checks can refuse them.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration } from 'oidc-provider';
import { decodeJwt, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';

export type TestAccount = { email: string; name: string; groups: string[] };

export type TestProvider = {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, TestAccount>;
  /** Claims to overwrite in the next ID tokens the token endpoint answers with (null: none). */
  tamperIdToken: Record<string, unknown> | null;
  /** Seconds an authorization code lives. */
  codeTtl: number;
  /** Changes (or delays) the provider's redirect back to the console, as a man in the middle could. */
  tamperCallback: ((url: URL) => Promise<void> | void) | null;
  stop: () => Promise<void>;
};

const silence = () => {
  // The provider's own console output; the specs read the console's pages, not this.
};

export async function startTestProvider(port: number, redirectUri: string): Promise<TestProvider> {
  const issuer = `http://127.0.0.1:${port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const signingKey = await importJWK(jwk, 'RS256');

  const state: TestProvider = {
    issuer,
    clientId: 'countersign-e2e',
    clientSecret: 'countersign-e2e-secret-that-is-long-enough',
    accounts: new Map(),
    tamperIdToken: null,
    codeTtl: 60,
    tamperCallback: null,
    stop: async () => {},
  };

  const configuration: Configuration = {
    clients: [
      {
        client_id: state.clientId,
        client_secret: state.clientSecret,
        redirect_uris: [redirectUri],
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: ['countersign-e2e-provider-cookie-key'] },
    pkce: { required: () => true },
    // Claims requested by a scope reach the ID token only with this off (a behaviour of oidc-provider 9).
    conformIdTokenClaims: false,
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
    features: { devInteractions: { enabled: true } },
    ttl: { AuthorizationCode: () => state.codeTtl },
    async findAccount(_ctx, id) {
      const account = state.accounts.get(id);
      if (!account) return undefined;
      return {
        accountId: id,
        claims: async () => ({
          sub: id,
          email: account.email,
          email_verified: true,
          name: account.name,
          groups: [...account.groups],
        }),
      };
    },
    // Consent is given at once: the specs are about the console, not the provider's consent page.
    async loadExistingGrant(ctx) {
      const oidc = ctx.oidc;
      const grantId = oidc.result?.consent?.grantId || oidc.session!.grantIdFor(oidc.client!.clientId);
      if (grantId) return oidc.provider.Grant.find(grantId);
      const grant = new oidc.provider.Grant({ clientId: oidc.client!.clientId, accountId: oidc.session!.accountId! });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  };
  const provider = new Provider(issuer, configuration);
  provider.on('server_error', silence);

  provider.use(async (ctx, next) => {
    await next();
    const location = ctx.response.get('location') ?? '';
    if (state.tamperCallback && location.startsWith(redirectUri)) {
      const url = new URL(location);
      await state.tamperCallback(url);
      ctx.response.set('location', url.toString());
    }
    if (ctx.path !== '/token' || !state.tamperIdToken) return;
    const body = ctx.body as { id_token?: string } | undefined;
    if (!body?.id_token) return;
    const claims = { ...decodeJwt(body.id_token), ...state.tamperIdToken };
    ctx.body = {
      ...body,
      id_token: await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'test-key' }).sign(signingKey),
    };
  });

  const server = http.createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  if ((server.address() as AddressInfo).port !== port) throw new Error('provider did not bind its port');
  state.stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
