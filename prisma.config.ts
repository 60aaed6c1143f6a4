import { defineConfig } from 'prisma/config';

// Migrations are applied by scripts/migrate.ts (the native schema engine cannot be
// downloaded here); this file serves `prisma generate` and machines with the native CLI.
export default defineConfig({
  schema: 'prisma/schema',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://localhost/countersign' },
});
