import 'server-only';
import { Auth } from '@auth/core';
import NextAuth, { AuthError, CredentialsSignin, type NextAuthConfig } from 'next-auth';
import Credentials from 'next-auth/providers/credentials';
import { headers } from 'next/headers';
import { NextRequest } from 'next/server';
import { signInSchema } from '@/lib/users/schemas';
import { config, setEnvironment } from '@/lib/config';
import { deviceFromUserAgent } from '@/lib/identity/device';
import { isDatabaseUnavailable } from '../db/unavailable';
import { verifyPassword } from '../users/users';
import { recordSignIn } from '../users/users-sso';
import { closeSession, openSession } from '../users/sessions';
import { admitSignInShared, clientAddress } from '../rate-limit/rate-limit';
import { oidcProvider, ssoSignIn } from './auth-oidc';

/** Sign-in could not check the password because the database is unavailable (not "wrong password"). */
export class SignInUnavailable extends CredentialsSignin {
  code = 'unavailable';
}

declare module 'next-auth' {
  interface Session {
    /** The sessions row this cookie stands for (lib/server/users/sessions.ts). */
    sessionId?: string;
    sessionVersion?: number;
  }
}

// Read once (lib/config): a bad value stops the server (and `npm start` before it) naming the variable.
export const identity = config().identity;

const passwords = Credentials({
  credentials: { email: {}, password: {} },
  async authorize(raw, request) {
    const parsed = signInSchema.safeParse(raw);
    if (!parsed.success) return null;
    const { email, password } = parsed.data;
    const address = clientAddress(request.headers);
    const admission = await admitSignInShared(email, address);
    if (!admission.admitted) {
      // Too many failed attempts for this address or e-mail: refused like a wrong password
      // (same answer, and the password is still checked so it takes as long); admitSignIn logs it.
      await verifyPassword(email, password).catch(() => null);
      return null;
    }
    let viewer;
    try {
      viewer = await verifyPassword(email, password);
    } catch (err) {
      admission.refund(); // the check did not happen: not a failed guess
      // Auth.js would wrap anything else in a CallbackRouteError, indistinguishable from a wrong password.
      if (isDatabaseUnavailable(err)) throw new SignInUnavailable();
      throw err;
    }
    if (viewer) admission.refund(); // only failed attempts count
    return viewer ? { id: viewer.userId, email: viewer.email, name: viewer.name } : null;
  },
});

// Auth.js configuration. Only lib/server/auth/session.ts reads the session it produces.
// The redirect URI must be the same when the sign-in starts (a server action) and when the
// provider sends the browser back (the route handler): COUNTERSIGN_PUBLIC_URL when set
// (docs/api.md), else the address the browser used, in both.
// Auth.js reads AUTH_URL from the environment itself, so it is set there.
const publicUrl = config().COUNTERSIGN_PUBLIC_URL;
if (publicUrl && !config().AUTH_URL) setEnvironment({ AUTH_URL: new URL('/api/auth', publicUrl).toString() });

// Auth.js builds the redirect URI, and where it sends the browser afterwards, from the URL of the
// request it is given. The server action reads AUTH_URL, or the Host header, as written; but a
// NextRequest's URL names every loopback address `localhost` (Next normalizes it, and next-auth's own
// handler makes a NextRequest), so under 127.0.0.1 the callback would compute another redirect URI
// than the sign-in sent, and send the browser to a name its sign-in cookies were never set for. So
// the route handler gives Auth.js a plain Request, at AUTH_URL's origin or else the browser's.
async function atAuthOrigin(req: NextRequest): Promise<Request> {
  const authUrl = config().AUTH_URL;
  let origin: string;
  if (authUrl) origin = new URL(authUrl).origin;
  else {
    const host = req.headers.get('x-forwarded-host') ?? req.headers.get('host');
    const proto = req.headers.get('x-forwarded-proto') ?? req.nextUrl.protocol.replace(/:$/, '');
    // `next start` builds `req.url` from its own listening name, not the Host.
    origin = host ? `${proto}://${host}` : new URL(req.url).origin;
  }
  const { pathname, search } = new URL(req.url);
  const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : await req.arrayBuffer();
  return new Request(new URL(`${pathname}${search}`, origin), { method: req.method, headers: req.headers, body });
}

/**
 * A refused password is an everyday event, not a fault: one readable line, no stack trace
 * (Auth.js's own logger prints one for every wrong password). Anything else as Auth.js would.
 */
const logger = {
  error(error: Error) {
    const type = error instanceof AuthError ? error.type : error.name;
    if (type === 'CredentialsSignin') {
      const code = (error as CredentialsSignin).code;
      console.warn(
        code === 'unavailable'
          ? '[auth] sign-in failed: the database is unavailable'
          : '[auth] sign-in refused: wrong e-mail or password',
      );
      return;
    }
    const cause = (error.cause as { err?: unknown } | undefined)?.err;
    console.error(`[auth][error] ${type}: ${error.message}`);
    if (cause instanceof Error) console.error('[auth][cause]', cause.stack);
    else if (error.stack) console.error(error.stack);
  },
};

const authConfig: NextAuthConfig = {
  trustHost: true,
  logger,
  secret: config().AUTH_SECRET,
  session: { strategy: 'jwt', maxAge: 8 * 60 * 60 },
  pages: { signIn: '/sign-in', error: '/sign-in/error' },
  providers: [...(identity.passwordSignIn ? [passwords] : []), ...(identity.oidc ? [oidcProvider(identity.oidc)] : [])],
  callbacks: {
    // SSO: the person is created or refreshed from the verified ID token, or refused with a page
    // saying why (a string is where Auth.js sends the browser instead; no session is made).
    async signIn({ user, account, profile }) {
      if (account?.provider !== 'oidc') return true;
      if (!identity.oidc || !profile) return '/sign-in/refused?reason=invalid';
      const outcome = await ssoSignIn(identity.oidc, profile);
      if (!outcome.ok) return `/sign-in/refused?reason=${outcome.reason}`;
      user.id = outcome.userId;
      return true;
    },
    // The token carries the user id and the session it stands for; role and status are read fresh,
    // and the session checked, on every request (session.ts).
    async jwt({ token, user, account }) {
      if (user?.id) {
        const h = await headers();
        const method = account?.provider === 'oidc' ? 'oidc' : 'password';
        const opened = await openSession(user.id, method, deviceFromUserAgent(h.get('user-agent')), clientAddress(h));
        if (method === 'password') await recordSignIn(user.id);
        token.sub = user.id;
        token.sid = opened.id;
        token.sv = opened.version;
      }
      return token;
    },
    session({ session, token }) {
      if (token.sub) session.user.id = token.sub;
      if (typeof token.sid === 'string') session.sessionId = token.sid;
      if (typeof token.sv === 'number') session.sessionVersion = token.sv;
      return session;
    },
  },
  events: {
    async signOut(message) {
      const sid = 'token' in message ? message.token?.sid : undefined;
      if (typeof sid === 'string') await closeSession(sid);
    },
  },
};
// NextAuth completes `authConfig` in place (base path, secret, providers): what its own handler passes to Auth.js.
const nextAuth = NextAuth(authConfig);

export const { auth, signIn, signOut } = nextAuth;
export const handlers = {
  GET: async (req: NextRequest) => Auth(await atAuthOrigin(req), authConfig),
  POST: async (req: NextRequest) => Auth(await atAuthOrigin(req), authConfig),
};
