/**
 * A JSON answer serialised once: a handler that answers the same body many
 * times (a cached list page, the network stats) returns it as its `body`, and
 * the server sends its bytes, length and ETag as they are instead of
 * serialising and hashing again.
 */
import type { GzipCopy } from './compression.js';
import { etagOf } from './etag.js';

export class SerializedJson {
  readonly bytes: Buffer;
  readonly etag: string;
  /** The `Content-Length` header's value. */
  readonly contentLength: string;
  /**
   * Its gzip'd copy, made once it is answered again (compression.ts).
   * @internal
   */
  gzipCopy?: GzipCopy;

  constructor(value: unknown) {
    this.bytes = Buffer.from(JSON.stringify(value ?? null), 'utf8');
    this.etag = etagOf(this.bytes);
    this.contentLength = String(this.bytes.length);
  }
}
