// Test fixtures: one or more samples per masking kind, with what masking must make of them.
// Shared by the unit tests and the API tests, so both check every kind.
import type { MaskKind } from './mask';

// Vendor-shaped test tokens are assembled at run time so the source holds no string that
// secret scanners (or a reader) would take for a live credential.
export const t = (...parts: string[]) => parts.join('');
const JWT = t(
  'eyJhbGciOiJIUzI1NiJ9',
  '.',
  'eyJzdWIiOiIxMjM0NTY3ODkwIn0',
  '.',
  'dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
);
const PEM_BODY = 'MIIEowIBAAKCAQEA7bq0Yx1vPp3Lw9Q2\nk8Zt4Rm6Vn0Xc5Hb2Jd7Fg1Ls3Qw9Er==\n';
const pem = (label: string) =>
  t('-----BEGIN ', label, ' PRIVATE KEY-----\n', PEM_BODY, '-----END ', label, ' PRIVATE KEY-----');

export const MASKED: [MaskKind, string, string][] = [
  ['bearer_token', 'Authorization: Bearer abc123def456ghi789', 'Authorization: Bearer [masked:bearer_token]'],
  ['bearer_token', 'authorization: bearer AbCdEfGhIjKlMnOpQrStUv', 'authorization: bearer [masked:bearer_token]'],
  ['jwt', `token ${JWT} sent`, 'token [masked:jwt] sent'],
  ['jwt', `Authorization: Bearer ${JWT}`, 'Authorization: Bearer [masked:jwt]'],
  ['aws_key', t('key ', 'AKIA', 'IOSFODNN7EXAMPLE'), 'key [masked:aws_key]'],
  ['aws_key', t('key ', 'ASIA', 'Y3FDSNDKFKSIDJSW'), 'key [masked:aws_key]'],
  [
    'aws_key',
    t('aws_secret_access_key=', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'),
    'aws_secret_access_key=[masked:aws_key]',
  ],
  [
    'aws_key',
    t('"AWS_SECRET_ACCESS_KEY": "', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', '"'),
    '"AWS_SECRET_ACCESS_KEY": "[masked:aws_key]"',
  ],
  ...['ghp', 'gho', 'ghu', 'ghs', 'ghr'].map((p): [MaskKind, string, string] => [
    'github_token',
    t('use ', p, '_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'),
    'use [masked:github_token]',
  ]),
  ['github_token', t('github_pat_', '11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz'), '[masked:github_token]'],
  ...['xoxb', 'xoxp', 'xoxa', 'xoxr', 'xapp'].map((p): [MaskKind, string, string] => [
    'slack_token',
    t(p, '-', '1234567890-0987654321-AbCdEfGhIj'),
    '[masked:slack_token]',
  ]),
  ...['sk_live_', 'sk_test_', 'rk_live_', 'pk_live_'].map((p): [MaskKind, string, string] => [
    'stripe_key',
    t('stripe ', p, '4eC39HqLyjWDarjtT1zdp7dc'),
    'stripe [masked:stripe_key]',
  ]),
  ['google_api_key', t('key=', 'AIza', 'Sy3x'.repeat(8), 'a-_', '&q=1'), 'key=[masked:google_api_key]&q=1'],
  ['api_key', t('OPENAI_KEY ', 'sk-', 'proj-', 'abcDEF1234567890abcdefGHIJ'), 'OPENAI_KEY [masked:api_key]'],
  ['api_key', t('key ', 'sk-', 'ant-', 'api03-', 'abcdefghijklmnop1234567890'), 'key [masked:api_key]'],
  ['api_key', t('key ', 'sk-', 'T3BlbkFJ1234567890abcdef'), 'key [masked:api_key]'],
  ['api_key', t('Bearer ', 'cs_live_', '9f8e7d6c5b4a3f2e'), 'Bearer [masked:api_key]'],
  ['api_key', t('token ', 'cs_pat_', 'AbC123xyz_0'), 'token [masked:api_key]'],
  ['private_key', `key: ${pem('RSA')} end`, 'key: [masked:private_key] end'],
  ['private_key', pem('OPENSSH'), '[masked:private_key]'],
  ['private_key', pem('EC'), '[masked:private_key]'],
  ['private_key', pem('ENCRYPTED'), '[masked:private_key]'],
  [
    'private_key',
    t('-----BEGIN ', 'PRIVATE KEY-----\\nMIIEvQIBADAN\\n-----END PRIVATE KEY-----\\n"}'),
    '[masked:private_key]\\n"}',
  ],
  [
    'private_key',
    t('cut off: -----BEGIN ', 'PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEF'),
    'cut off: [masked:private_key]',
  ],
  ['secret', 'token Zx9Qm2Lp7Rt4Vw8Yk3Nb6Hc1Jd5Fg0Ss tail', 'token [masked:secret] tail'],
  ['secret', 'cache /home/u/Zx9Qm2Lp7Rt4Vw8Yk3Nb6Hc1Jd5Fg0Ss/x', 'cache [masked:secret]'],
  ['secret', 'key /Zx9Qm2Lp7Rt4Vw8Yk3Nb6Hc1Jd5Fg0Ss+ab=', 'key [masked:secret]'],
  ['secret', 'hex 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39', 'hex [masked:secret]'],
  ['secret', 'password=s3cr3t!', 'password=[masked:secret]'],
  ['secret', '{"client_secret": "abcd1234"}', '{"client_secret": "[masked:secret]"}'],
  ['secret', 'x-api-key: 0a1b2c3d', 'x-api-key: [masked:secret]'],
  ['secret', 'postgres://admin:hunter2@db.example.com/app', 'postgres://admin:[masked:secret]@db.example.com/app'],
  ['secret', 'Authorization: Basic dXNlcjpwYXNzd29yZA==', 'Authorization: Basic [masked:secret]'],
  ['email', 'contact jane.doe+billing@example.co.uk now', 'contact [masked:email] now'],
  ['email', 'mailto:ops_team@acme-corp.io.', 'mailto:[masked:email].'],
  ['phone', 'call +1 (555) 123-4567', 'call [masked:phone]'],
  ['phone', 'call +44 20 7946 0958 today', 'call [masked:phone] today'],
  ['phone', 'call +33 6 12 34 56 78', 'call [masked:phone]'],
  ['phone', 'call +4915123456789', 'call [masked:phone]'],
  ['phone', 'call 555-123-4567', 'call [masked:phone]'],
  ['phone', 'call (555) 123-4567', 'call [masked:phone]'],
  ['phone', 'call 555.123.4567', 'call [masked:phone]'],
  ['phone', 'call 1-800-555-0199', 'call [masked:phone]'],
  ['phone', 'appelez le 06 12 34 56 78', 'appelez le [masked:phone]'],
  ['phone', 'Tel. 030/1234567', 'Tel. [masked:phone]'],
  ['phone', 'mobil 0171-1234567', 'mobil [masked:phone]'],
  ['phone', 'ring 020 7946 0958', 'ring [masked:phone]'],
  ['ssn', 'SSN 123-45-6789.', 'SSN [masked:ssn].'],
  ['card_number', 'card 4111 1111 1111 1111', 'card [masked:card_number]'],
  ['card_number', 'card 4111-1111-1111-1111 expired', 'card [masked:card_number] expired'],
  ['card_number', 'card 5555555555554444', 'card [masked:card_number]'],
  ['card_number', 'amex 3782 822463 10005', 'amex [masked:card_number]'],
  ['card_number', 'visa 4222222222222', 'visa [masked:card_number]'],
  ['card_number', 'order 2026 4111 1111 1111 1111 paid', 'order 2026 [masked:card_number] paid'],
];
