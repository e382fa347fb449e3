/**
 * gzip for answers the server sends again and again: a kept page of a list, a network statistics answer. Such a
 * body ({@link SerializedJson}, {@link TextDocument}) of {@link GZIP_MIN_BYTES} or more is compressed once, off
 * the event loop, the second time it is answered, and from then on a client that accepts gzip gets the
 * compressed copy. A body answered only
 * once (a page rendered per request) is never compressed: the work would be thrown away with it. Until the
 * copy is ready, and for bodies too small to gain, the answer goes as it is.
 *
 * The two forms are two representations of one resource (RFC 9110 §8.8.3): the gzip'd one has an ETag of its
 * own (the hash of its bytes), the ETag of the form a client holds makes its conditional request a 304, and every
 * answer that could have been compressed says `Vary: Accept-Encoding`, so that a cache keeps the two apart. At
 * most two compressions run at once; a body that finds them busy is compressed when it is asked for again.
 */
import { gzip } from 'node:zlib';
import Negotiator from 'negotiator';
import { etagOf } from './etag.js';

/** Bodies smaller than this go as they are: gzip's header and the work would eat what it saves. */
export const GZIP_MIN_BYTES = 1024;

/** What a compressible body holds: its bytes and ETag, and (added here) the state of its gzip'd copy. */
export interface CompressibleBody {
  readonly bytes: Buffer;
  readonly etag: string;
  gzipCopy?: GzipCopy;
}

export interface GzipCopy {
  /** Times answered while there was no copy yet. */
  answered: number;
  /** The compressed bytes and their ETag, once ready; undefined while compressing, or if it failed. */
  ready?: GzipReady;
}

export interface GzipReady {
  bytes: Buffer;
  etag: string;
}

/** Compressions under way at most: each holds a thread of Node's pool (the store's file writes use it too). */
const MAX_IN_FLIGHT = 2;
let inFlight = 0;

/** Whether a request with these headers takes gzip: listed (or `*`) with a quality above 0, not below identity. */
export function acceptsGzip(headers: Record<string, string | string[] | undefined>): boolean {
  if (headers['accept-encoding'] === undefined) return false;
  return new Negotiator({ headers }).encoding(['gzip', 'identity'], { preferred: ['gzip'] }) === 'gzip';
}

/**
 * The gzip'd copy of `body` if it is ready; else undefined, having started it the second time it is asked
 * for. `onFailure` hears of a copy that could not be made (the body then always goes as it is).
 */
export function gzippedCopy(body: CompressibleBody, onFailure: (error: Error) => void): GzipReady | undefined {
  const copy = (body.gzipCopy ??= { answered: 0 });
  if (copy.ready) return copy.ready;
  copy.answered++;
  if (copy.answered === 2) {
    if (inFlight >= MAX_IN_FLIGHT) {
      // Busy: the next answer asks again.
      copy.answered = 1;
      return undefined;
    }
    inFlight++;
    gzip(body.bytes, (error, compressed) => {
      inFlight--;
      if (error) {
        onFailure(error);
        return;
      }
      // Kept only if it saves something; else every later answer goes as it is.
      if (compressed.length >= body.bytes.length) return;
      // The tag of these bytes: another zlib (another instance of the bot, an upgrade) may make others.
      copy.ready = { bytes: compressed, etag: etagOf(compressed) };
    });
  }
  return undefined;
}
