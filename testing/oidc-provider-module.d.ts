// oidc-provider ships no types (and @types/oidc-provider is not installed): the little the specs use.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  type Grant = { addOIDCScope(scope: string): void; save(): Promise<string> };
  type Ctx = {
    path: string;
    body: unknown;
    response: { get(field: string): string; set(field: string, value: string): void };
    oidc: {
      result?: { consent?: { grantId?: string } };
      session?: { accountId?: string; grantIdFor(clientId: string): string | undefined };
      client?: { clientId: string };
      provider: {
        Grant: { new (init: { clientId: string; accountId: string }): Grant; find(id: string): Promise<Grant> };
      };
    };
  };
  type Account = { accountId: string; claims: () => Promise<Record<string, unknown>> };

  export type Configuration = {
    clients: Record<string, unknown>[];
    jwks: { keys: Record<string, unknown>[] };
    cookies: { keys: string[] };
    pkce: { required: () => boolean };
    conformIdTokenClaims: boolean;
    claims: Record<string, string[]>;
    features: Record<string, unknown>;
    ttl: Record<string, () => number>;
    findAccount: (ctx: Ctx, id: string) => Promise<Account | undefined>;
    loadExistingGrant: (ctx: Ctx) => Promise<Grant | undefined>;
  };

  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    on(event: string, listener: (...args: unknown[]) => void): void;
    use(middleware: (ctx: Ctx, next: () => Promise<void>) => Promise<void>): void;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
