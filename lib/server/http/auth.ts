import 'server-only';
import NextAuth, { CredentialsSignin } from 'next-auth';
import Credentials from 'next-auth/providers/credentials';
import { signInSchema } from '@/lib/users/schemas';
import { isDatabaseUnavailable } from '../data/unavailable';
import { verifyPassword } from '../data/users';
import { admitSignInShared, clientAddress } from '../services/rate-limit';

/** Sign-in could not check the password because the database is unavailable (not "wrong password"). */
export class SignInUnavailable extends CredentialsSignin {
  code = 'unavailable';
}

// Auth.js configuration. Only lib/server/http/session.ts reads the session it produces.
export const { handlers, auth, signIn, signOut } = NextAuth({
  trustHost: true,
  secret: process.env.AUTH_SECRET,
  session: { strategy: 'jwt', maxAge: 8 * 60 * 60 },
  pages: { signIn: '/sign-in' },
  providers: [
    Credentials({
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
    }),
  ],
  callbacks: {
    // The token carries only the user id; role and status are read fresh on every request
    // (session.ts), so a changed role or a disabled account takes effect at once.
    jwt({ token, user }) {
      if (user?.id) token.sub = user.id;
      return token;
    },
    session({ session, token }) {
      if (token.sub) session.user.id = token.sub;
      return session;
    },
  },
});
