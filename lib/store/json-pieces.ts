/**
 * JSON text in pieces, so that a big document can be written a little at a time with other work
 * running in between, instead of one `JSON.stringify` that holds the event loop for as long as
 * the whole document takes.
 */

import type { FileHandle } from 'node:fs/promises';
import type { HoldMeter } from './hold-meter.js';

/** Part of a JSON text: a string, or bytes already encoded as UTF-8. */
export type JsonPiece = string | Uint8Array;

/**
 * A value whose JSON text comes from `pieces()` instead of from the value itself. Placed
 * anywhere in a document given to {@link jsonPieces}, its pieces are written in its place.
 */
export class PiecewiseJson {
  constructor(readonly pieces: () => Iterable<JsonPiece>) {}
}

/**
 * Characters of text gathered before a piece is handed on. Small enough that producing one
 * piece is well under a millisecond; big enough that the per-piece overhead does not matter.
 */
const PIECE_CHARS = 8 * 1024;

/**
 * The JSON text of `value`, exactly as `JSON.stringify(value)` writes it (toJSON, left-out
 * undefined and functions, null for them in arrays, null for non-finite numbers), in pieces of
 * about {@link PIECE_CHARS} characters. A {@link PiecewiseJson} is replaced by its own pieces.
 *
 * Produced lazily: the value is read as the pieces are taken, so a value that changes in
 * between gives the text of its parts at the moments they were read.
 */
export function* jsonPieces(value: unknown): Generator<JsonPiece, void, undefined> {
  const encoder = new PieceEncoder();
  const prepared = toJsonValue(value, '');
  if (isLeftOut(prepared)) throw new TypeError('a store document must be JSON; got undefined, a function or a symbol');
  yield* encoder.value(prepared);
  if (encoder.text) yield encoder.text;
}

/** What JSON.stringify leaves out of an object (and writes as null in an array). */
function isLeftOut(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

function toJsonValue(value: unknown, key: string): unknown {
  if (typeof value === 'object' && value !== null && !(value instanceof PiecewiseJson)) {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return (toJSON as (key: string) => unknown).call(value, key);
  }
  return value;
}

class PieceEncoder {
  /** Text not handed on yet. */
  text = '';
  /** The containers being written, to refuse a cycle as JSON.stringify does rather than recurse forever. */
  private readonly open = new Set<object>();

  *value(value: unknown): Generator<JsonPiece, void, undefined> {
    if (value instanceof PiecewiseJson) {
      if (this.text) yield this.text;
      this.text = '';
      yield* value.pieces();
      return;
    }
    if (typeof value !== 'object' || value === null || isBoxedPrimitive(value)) {
      this.text += JSON.stringify(value);
      return;
    }
    if (this.open.has(value)) throw new TypeError('Converting circular structure to JSON');
    this.open.add(value);
    if (Array.isArray(value)) {
      this.text += '[';
      for (let index = 0; index < value.length; index++) {
        if (index > 0) this.text += ',';
        const element = toJsonValue(value[index], String(index));
        if (isLeftOut(element)) this.text += 'null';
        else yield* this.value(element);
        if (this.text.length >= PIECE_CHARS) {
          yield this.text;
          this.text = '';
        }
      }
      this.text += ']';
    } else {
      this.text += '{';
      let first = true;
      for (const key of Object.keys(value)) {
        const property = toJsonValue((value as Record<string, unknown>)[key], key);
        if (isLeftOut(property)) continue;
        this.text += (first ? '' : ',') + JSON.stringify(key) + ':';
        first = false;
        yield* this.value(property);
        if (this.text.length >= PIECE_CHARS) {
          yield this.text;
          this.text = '';
        }
      }
      this.text += '}';
    }
    this.open.delete(value);
  }
}

function isBoxedPrimitive(value: object): boolean {
  return value instanceof Number || value instanceof String || value instanceof Boolean;
}

/** How long the writer works before it lets the event loop run other things. */
export const WORK_SLICE_MS = 3;

/**
 * Pieces are copied into one buffer of this size and written from it: no new memory per
 * piece (fresh buffers are memory outside the heap that the garbage collector is pushed to
 * reclaim, with pauses of its own), and a producer may reuse its own buffer for every piece.
 */
const STAGING_BYTES = 1024 * 1024;

/**
 * Write `pieces` to `handle` in order. Taking pieces and encoding them is synchronous work,
 * so after each {@link WORK_SLICE_MS} of it (or when the staging buffer is full) what is
 * gathered is written, and awaiting that write lets the event loop run timers, sockets and
 * the model's own changes before the next pieces are taken.
 *
 * A piece of bytes is used before the next piece is taken, so its buffer may be reused.
 */
export async function writePieces(handle: FileHandle, pieces: Iterable<JsonPiece>, meter?: HoldMeter): Promise<void> {
  const staging = Buffer.allocUnsafe(STAGING_BYTES);
  let staged = 0;
  let sliceStart = performance.now();
  const writeStaged = async () => {
    meter?.pause();
    await writeAll(handle, staging.subarray(0, staged));
    meter?.resume();
    staged = 0;
    sliceStart = performance.now();
  };
  for (const piece of pieces) {
    if (typeof piece === 'string') {
      // A UTF-16 code unit takes at most 3 bytes of UTF-8.
      if (piece.length * 3 > STAGING_BYTES - staged) await writeStaged();
      if (piece.length * 3 <= STAGING_BYTES) staged += staging.write(piece, staged, 'utf8');
      else await writeUnstaged(handle, Buffer.from(piece, 'utf8'), meter);
    } else {
      if (piece.byteLength > STAGING_BYTES - staged) await writeStaged();
      if (piece.byteLength <= STAGING_BYTES) {
        staging.set(piece, staged);
        staged += piece.byteLength;
      } else {
        await writeUnstaged(handle, piece, meter);
      }
    }
    if (performance.now() - sliceStart >= WORK_SLICE_MS) await writeStaged();
  }
  await writeStaged();
}

async function writeUnstaged(handle: FileHandle, bytes: Uint8Array, meter: HoldMeter | undefined): Promise<void> {
  meter?.pause();
  await writeAll(handle, bytes);
  meter?.resume();
}

/** Write until every byte is out: a write may take fewer bytes than it was given. */
async function writeAll(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.byteLength) {
    const result = await handle.write(bytes, written, bytes.byteLength - written);
    written += result.bytesWritten;
  }
}
