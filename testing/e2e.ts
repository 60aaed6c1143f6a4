import { execFileSync } from 'node:child_process';
import { expect, type APIResponse, type Page } from '@playwright/test';
import { DEMO_PASSWORD, demoUsers } from '../scripts/seed';

export const users = Object.fromEntries(
  demoUsers.map((u) => [u.role === 'reviewer' && u.email.startsWith('reviewer2') ? 'reviewer2' : u.role, u]),
) as Record<'admin' | 'reviewer' | 'reviewer2' | 'support', (typeof demoUsers)[number]>;

export async function signIn(page: Page, who: keyof typeof users, next?: string) {
  await page.goto(next ? `/sign-in?next=${encodeURIComponent(next)}` : '/sign-in');
  await page.getByLabel('Email').fill(users[who].email);
  await page.getByLabel('Password').fill(DEMO_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('viewer-email')).toHaveText(users[who].email);
}

/** Runs the real CLI against the test database (DATABASE_URL comes from npm test). */
export function cli(...args: string[]): string {
  return execFileSync('node_modules/.bin/tsx', ['--conditions=react-server', 'scripts/cli.ts', ...args], {
    encoding: 'utf8',
    env: process.env,
  });
}

export const secretFrom = (output: string, prefix: string) => {
  const m = new RegExp(`${prefix}[A-Za-z0-9_-]+`).exec(output);
  if (!m) throw new Error(`no ${prefix} secret in: ${output}`);
  return m[0];
};

/** A problem+json answer with this status and code, and no stack trace or database text in it. */
export async function expectProblem(res: APIResponse, status: number, code: string) {
  expect(res.status()).toBe(status);
  expect(res.headers()['content-type']).toContain('application/problem+json');
  const body = await res.json();
  expect(body).toMatchObject({
    status,
    code,
    type: expect.any(String),
    title: expect.any(String),
    detail: expect.any(String),
  });
  expect(JSON.stringify(body)).not.toMatch(/at .*\.(ts|js):\d+|prisma|postgres|SQL/i);
  return body;
}
