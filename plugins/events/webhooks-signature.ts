/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): a secret is `whsec_` and the base64 of its
 * bytes; a message is signed with HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<body>`, keyed with those
 * bytes, and the signature travels as `v1,<base64>` in the `webhook-signature` header. The receiver recomputes it
 * from the body exactly as sent, so the body is signed as the bytes that go out, never as re-serialized JSON.
 */
import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
/** The specification's bounds on a symmetric secret: at least 192 bits, at most 512. */
const MIN_SECRET_BYTES = 24;
const MAX_SECRET_BYTES = 64;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The key of a `whsec_` secret; or, when it is not one, what is wrong (to follow the key path in a message). */
export function parseSecret(secret: string): Buffer | string {
  const how = `(make one with: echo "whsec_$(openssl rand -base64 32)")`;
  if (!secret.startsWith(SECRET_PREFIX)) {
    return `must be a Standard Webhooks secret, "whsec_" and the base64 of 24 to 64 random bytes ${how}, got a string of ${secret.length} characters without that prefix`;
  }
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!BASE64.test(encoded)) {
    return `must be "whsec_" and base64 (A-Z, a-z, 0-9, +, /, = padding) ${how}, got other characters after "whsec_"`;
  }
  const key = Buffer.from(encoded, 'base64');
  if (key.length < MIN_SECRET_BYTES || key.length > MAX_SECRET_BYTES) {
    return `must hold 24 to 64 bytes after "whsec_" ${how}, got ${key.length}`;
  }
  return key;
}

/** The `webhook-signature` header's value for one attempt. */
export function sign(key: Buffer, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/**
 * A new `webhook-id`: unique per batch, the same on every attempt to deliver it. Random, so that it stays unique
 * when the store is emptied; no `.`, which the signed content uses as its separator.
 */
export function messageId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}
