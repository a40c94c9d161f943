// Newline framing of the stdio transport with bounded memory (SPEC §6). The SDK's ReadBuffer
// throws once 10 MiB are buffered and its transport then closes the session; here a line over the
// limit is discarded as it streams in, keeping only a little of its head and tail (enough to find
// the request id), and reported as one frame when its newline arrives.

/** How much of an oversized line's start and end is kept to recover its id. */
const KEPT_BYTES = 4096;

const NEWLINE = 0x0a;

export type Frame =
  | { readonly kind: 'line'; readonly bytes: Buffer }
  | {
      readonly kind: 'oversized';
      /** The whole line's length, without its newline. */
      readonly size: number;
      readonly head: Buffer;
      readonly tail: Buffer;
    };

/** The line being skipped: its size so far and its first and last bytes. */
interface Discarding {
  size: number;
  head: Buffer;
  tail: Buffer;
}

/** Splits a byte stream into lines of at most `maxBytes` (newline excluded); never holds more. */
export class LineFramer {
  readonly #maxBytes: number;
  #pending: Buffer[] = [];
  #pendingSize = 0;
  #discarding: Discarding | undefined;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Takes the next chunk; returns the frames it completed, in order. */
  push(chunk: Buffer): Frame[] {
    const frames: Frame[] = [];
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      this.#take(chunk.subarray(start, end));
      if (newline === -1) break;
      frames.push(this.#finish());
      start = newline + 1;
    }
    return frames;
  }

  /** At the end of input: the unterminated last line, if any, as a frame. */
  end(): Frame | undefined {
    if (this.#discarding === undefined && this.#pendingSize === 0) return undefined;
    return this.#finish();
  }

  /** Adds part of the current line, switching to discarding when it grows past the limit. */
  #take(piece: Buffer): void {
    if (piece.length === 0) return;
    const discarding = this.#discarding;
    if (discarding !== undefined) {
      discarding.size += piece.length;
      discarding.tail = lastBytes(Buffer.concat([discarding.tail, lastBytes(piece)]));
      return;
    }
    if (this.#pendingSize + piece.length <= this.#maxBytes) {
      this.#pending.push(piece);
      this.#pendingSize += piece.length;
      return;
    }
    const parts = [...this.#pending, piece];
    const size = this.#pendingSize + piece.length;
    this.#discarding = {
      size,
      // Buffer.concat with a length copies only that much: no second copy of the whole line.
      head: Buffer.concat(parts, Math.min(KEPT_BYTES, size)),
      tail: lastBytes(Buffer.concat(lastParts(parts))),
    };
    this.#pending = [];
    this.#pendingSize = 0;
  }

  /** Ends the current line and resets for the next one. */
  #finish(): Frame {
    const discarding = this.#discarding;
    this.#discarding = undefined;
    if (discarding !== undefined) return { kind: 'oversized', ...discarding };
    const bytes = Buffer.concat(this.#pending);
    this.#pending = [];
    this.#pendingSize = 0;
    return { kind: 'line', bytes };
  }
}

/** A copy of the last KEPT_BYTES (a copy, so the chunk it came from can be freed). */
function lastBytes(buffer: Buffer): Buffer {
  return Buffer.from(buffer.subarray(Math.max(0, buffer.length - KEPT_BYTES)));
}

/** The fewest trailing buffers that together hold at least KEPT_BYTES. */
function lastParts(parts: readonly Buffer[]): Buffer[] {
  const kept: Buffer[] = [];
  let size = 0;
  for (let i = parts.length - 1; i >= 0 && size < KEPT_BYTES; i -= 1) {
    const part = parts[i];
    if (part === undefined) break;
    kept.unshift(part);
    size += part.length;
  }
  return kept;
}
