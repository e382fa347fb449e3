/** Strong entity tags for GET answers, and the `If-None-Match` check that turns them into 304s. */
import { createHash } from 'node:crypto';

/** A strong, quoted ETag: the SHA-256 of the body bytes. */
export function etagOf(bytes: Uint8Array): string {
  return `"${createHash('sha256').update(bytes).digest('base64url')}"`;
}

/**
 * Whether an `If-None-Match` header matches the current ETag. The header may list several
 * tags or be `*`; the comparison is the weak one RFC 9110 prescribes for this header, so a
 * `W/` prefix is ignored.
 */
export function ifNoneMatchMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  // What a client sends back most of the time: the one tag it was given.
  if (header === etag) return true;
  const tags = header.split(',').map((tag) => tag.trim());
  return tags.some((tag) => tag === '*' || tag.replace(/^W\//, '') === etag);
}
