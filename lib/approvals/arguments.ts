// The arguments an approval request carries: the exact object the tool will be called with
// (docs/design.md "What a reviewer sees: what will run"). Checked against the request's
// argsDigest before anything is stored, masked before storage, and shown as data.
import { canonicalJson } from '@/lib/json/canonical';
import { argsDigest } from '@/lib/mcp/digest';
import { mask, maskPlaceholder } from '@/lib/redaction/mask';
import { skeleton } from '@/lib/text/confusables';
import type { JsonObject, JsonScalar, JsonValue } from './arguments-format';

// What shows arguments (no Node built-ins, so client components may import it) lives apart.
export * from './arguments-format';

/** UTF-8 bytes of the arguments' canonical JSON (docs/api.md "Approvals and grants"). */
export const ARGUMENTS_MAX_BYTES = 65_536;
/** Levels of nesting, the arguments object itself being the first. */
export const ARGUMENTS_MAX_DEPTH = 32;

export type ArgumentsCheck =
  | { ok: true; canonical: string }
  | {
      ok: false;
      code: 'invalid_input' | 'arguments_too_large' | 'arguments_digest_mismatch';
      path: string;
      message: string;
    };

/**
 * Whether `args` are a JSON object a tool can be called with, small enough to keep, and the ones
 * `argsDigest` was computed over. The canonical JSON on success (RFC 8785, `null` members kept as
 * the digest keeps them).
 */
export function checkArguments(args: unknown, digest: string): ArgumentsCheck {
  if (!isPlainObject(args)) {
    return refuse(
      'invalid_input',
      'arguments',
      'arguments must be a JSON object: the arguments the tool is called with',
    );
  }
  // Before anything recursive (canonical JSON, masking): a deep nesting would overflow the stack.
  const shape = checkShape(args);
  if (shape) return shape;
  const canonical = canonicalJson(args);
  const bytes = Buffer.byteLength(canonical, 'utf8');
  if (bytes > ARGUMENTS_MAX_BYTES) {
    return refuse(
      'arguments_too_large',
      'arguments',
      `arguments are ${bytes} bytes as canonical JSON, over the ${ARGUMENTS_MAX_BYTES} allowed: send a smaller call or ask for approval without them`,
    );
  }
  if (argsDigest(args as JsonObject) !== digest) {
    return refuse(
      'arguments_digest_mismatch',
      'arguments',
      'argsDigest is not "sha256:" + the hex SHA-256 of the canonical JSON (RFC 8785) of arguments: send the arguments the digest was computed over',
    );
  }
  return { ok: true, canonical };
}

function refuse(
  code: 'invalid_input' | 'arguments_too_large' | 'arguments_digest_mismatch',
  path: string,
  message: string,
) {
  return { ok: false as const, code, path, message };
}

// Iterative, so a nesting of any depth is refused without a stack overflow. Also refuses values
// JSON cannot carry (a caller handing over something other than parsed JSON).
function checkShape(args: Record<string, unknown>): ArgumentsCheck | null {
  const stack: { value: unknown; depth: number; path: string }[] = [{ value: args, depth: 1, path: 'arguments' }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { value, depth, path } = item;
    const children = Array.isArray(value)
      ? value.map((v, i) => [`${path}[${i}]`, v] as const)
      : isPlainObject(value)
        ? Object.entries(value).map(([k, v]) => [pathOf(path, k), v] as const)
        : null;
    if (children === null) {
      if (!isJsonScalar(value)) {
        return refuse(
          'invalid_input',
          path,
          `${path} is not a JSON value: send strings, numbers, booleans, null, arrays and objects`,
        );
      }
      continue;
    }
    if (depth > ARGUMENTS_MAX_DEPTH) {
      return refuse(
        'invalid_input',
        path,
        `arguments nest deeper than ${ARGUMENTS_MAX_DEPTH} levels at ${path}: flatten them`,
      );
    }
    for (let i = children.length - 1; i >= 0; i--) {
      stack.push({ value: children[i][1], depth: depth + 1, path: children[i][0] });
    }
  }
  return null;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const pathOf = (parent: string, key: string) =>
  IDENTIFIER.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;

function isJsonScalar(v: unknown): v is JsonScalar {
  return v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

// The words of docs/design.md "What a reviewer sees: what will run", without separators.
const SECRET_WORDS = [
  'password',
  'passwd',
  'secret',
  'token',
  'apikey',
  'privatekey',
  'accesskey',
  'authorization',
  'cookie',
  'credential',
];

/**
 * Whether a key names a secret: once folded (lib/text/confusables.ts skeleton: case, lookalikes,
 * invisible characters) and stripped of everything but letters and digits, it contains one of the
 * secret words. Containment, not whole words: "apikey" and "clientsecret" have no boundary to find,
 * so "max_tokens" and "secretary" are masked too; hiding a harmless value costs less than showing a
 * credential.
 */
export function isSecretKey(key: string): boolean {
  const compact = skeleton(key).replace(/[^\p{L}\p{N}]/gu, '');
  return SECRET_WORDS.some((word) => compact.includes(word));
}

const SECRET = maskPlaceholder('secret');

/**
 * The arguments as they may be stored and shown: every string through the masker, a value whose
 * key names a secret replaced whole (whatever its type, at any depth, inside arrays too). Keys,
 * numbers, booleans, null and nesting kept, keys in the order sent. Call after checkArguments,
 * which bounds the depth.
 */
export function maskArguments(args: JsonObject): JsonObject {
  return maskObject(args);
}

// Object.fromEntries defines own members, so a key "__proto__" stays a key and sets no prototype.
function maskObject(obj: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, isSecretKey(k) ? SECRET : maskValue(v)]));
}

function maskValue(v: JsonValue): JsonValue {
  if (typeof v === 'string') return mask(v);
  if (Array.isArray(v)) return v.map(maskValue);
  if (v !== null && typeof v === 'object') return maskObject(v);
  return v;
}
