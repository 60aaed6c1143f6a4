// Plain HTTP GETs for specs that talk to a console other than Playwright's own (e.g. one started
// with scripts/lib/console-process.ts `startConsole`).
import { request as httpRequest } from 'node:http';

export type Answer = {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json: () => unknown;
};

/**
 * One GET on a fresh connection. Not fetch: its pooled keep-alive connection may be one the
 * server is just closing after a few idle seconds (a slow CLI call in between), which fails the
 * request with "other side closed".
 */
export function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
