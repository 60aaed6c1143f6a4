import { describe, expect, it } from 'vitest';
import { checkEndpointUrl, isForbiddenAddress } from './address';

const self = ['https://countersign.example.com', 'http://localhost:3000'];

describe('endpoint URLs', () => {
  // Hand-written: [url, refused message or null when accepted]
  const table: [string, string | null][] = [
    ['https://hooks.slack.com/services/T0/B0/xyz', null],
    ['http://127.0.0.1:8080/hook', null],
    ['http://10.0.0.7/hook', null],
    ['ftp://example.com/hook', 'must be an http(s) URL'],
    ['javascript:alert(1)', 'must be an http(s) URL'],
    ['file:///etc/passwd', 'must be an http(s) URL'],
    ['not a url', 'not a URL'],
    ['https://user:pw@example.com/', 'must not carry a user name or password'],
    ['http://169.254.169.254/latest/meta-data/', 'must not point at a link-local or cloud metadata address'],
    ['http://169.254.1.1/', 'must not point at a link-local or cloud metadata address'],
    ['http://[fd00:ec2::254]/', 'must not point at a link-local or cloud metadata address'],
    ['http://[fe80::1]/', 'must not point at a link-local or cloud metadata address'],
    ['http://[::ffff:169.254.169.254]/', 'must not point at a link-local or cloud metadata address'],
    ['http://100.100.100.200/', 'must not point at a link-local or cloud metadata address'],
    ['http://metadata.google.internal/computeMetadata/v1/', 'must not point at a link-local or cloud metadata address'],
    ['http://0x a9fe a9fe/', 'not a URL'],
    ['http://2852039166/', 'must not point at a link-local or cloud metadata address'], // 169.254.169.254 as a number
    ['https://countersign.example.com/api/v1/approvals', 'must not point at this console itself'],
    ['http://localhost:3000/x', 'must not point at this console itself'],
    ['http://127.0.0.1:3000/x', 'must not point at this console itself'],
    [`https://example.com/${'a'.repeat(3000)}`, 'at most 2048 characters'],
  ];
  it.each(table)('%s', (url, refused) => {
    const r = checkEndpointUrl(url, self);
    if (refused === null) expect(r.ok).toBe(true);
    else expect(r).toEqual({ ok: false, message: refused });
  });

  it('addresses after resolution', () => {
    for (const a of ['169.254.169.254', 'fd00:ec2::254', '::ffff:a9fe:a9fe', 'fe80::1%eth0', '0.0.0.0'])
      expect(isForbiddenAddress(a), a).toBe(true);
    for (const a of ['127.0.0.1', '::1', '10.1.2.3', '93.184.216.34', '2606:4700::1111'])
      expect(isForbiddenAddress(a), a).toBe(false);
  });
});
