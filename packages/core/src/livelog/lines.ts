// The source's merged output as text lines, as it arrives: UTF-8 decoded across chunk boundaries,
// terminal escapes removed, every line bounded so a source printing one endless line cannot grow
// the server's memory (what is cut is said in the line).
import { StringDecoder } from 'node:string_decoder';
import { stripAnsi } from '../process/output.js';

/** Longest line kept, in characters; the rest of a longer line is replaced by a marker. */
export const MAX_LINE_CHARS = 2000;

export class LineSplitter {
  readonly #decoder = new StringDecoder('utf8');
  readonly #maxChars: number;
  #partial = '';
  /** Characters of the current line dropped beyond the limit. */
  #cut = 0;

  constructor(maxChars: number = MAX_LINE_CHARS) {
    this.#maxChars = maxChars;
  }

  /** The lines this piece of output completes. */
  push(chunk: Buffer): string[] {
    return this.#take(this.#decoder.write(chunk));
  }

  /** The last line, when the output did not end with a newline. */
  end(): string[] {
    const lines = this.#take(this.#decoder.end());
    if (this.#partial !== '' || this.#cut > 0) lines.push(this.#line());
    return lines;
  }

  #take(text: string): string[] {
    const lines: string[] = [];
    let start = 0;
    for (;;) {
      const newline = text.indexOf('\n', start);
      const piece = text.slice(start, newline === -1 ? undefined : newline);
      this.#append(piece);
      if (newline === -1) return lines;
      lines.push(this.#line());
      start = newline + 1;
    }
  }

  #append(piece: string): void {
    // Room for a little more than the limit: escapes removed later may shorten it.
    const room = this.#maxChars * 2 - this.#partial.length;
    if (piece.length <= room) {
      this.#partial += piece;
    } else {
      this.#partial += piece.slice(0, Math.max(room, 0));
      this.#cut += piece.length - Math.max(room, 0);
    }
  }

  #line(): string {
    let line = stripAnsi(this.#partial).replace(/\r$/, '');
    let cut = this.#cut;
    if (line.length > this.#maxChars) {
      cut += line.length - this.#maxChars;
      line = line.slice(0, this.#maxChars);
    }
    this.#partial = '';
    this.#cut = 0;
    return cut === 0 ? line : `${line} [… ${String(cut)} characters cut]`;
  }
}
