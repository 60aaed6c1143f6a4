// @ts-check

import { contentSecurityPolicy } from './lib/content-security-policy.mjs';

// A page's Content-Security-Policy is set per request, with a fresh script nonce, in proxy.ts; the
// API's answers, which proxy.ts does not see (but for paths with a percent sign), get it here.

/** @type {import('next').NextConfig} */
const nextConfig = {
  poweredByHeader: false,
  reactStrictMode: true,
  experimental: { authInterrupts: true },
  serverExternalPackages: ['pg', '@prisma/adapter-pg', 'bcryptjs'],
  async headers() {
    return [
      {
        source: '/:path*',
        headers: [
          { key: 'X-Content-Type-Options', value: 'nosniff' },
          { key: 'X-Frame-Options', value: 'DENY' },
          { key: 'Referrer-Policy', value: 'strict-origin-when-cross-origin' },
          { key: 'Permissions-Policy', value: 'camera=(), microphone=(), geolocation=()' },
          // Browsers honour this only over https, so it is safe to send on every response.
          { key: 'Strict-Transport-Security', value: 'max-age=31536000; includeSubDomains' },
        ],
      },
      { source: '/api/:path*', headers: [{ key: 'Content-Security-Policy', value: contentSecurityPolicy() }] },
    ];
  },
};

export default nextConfig;
