// Groups lines into the chunks sent to the endpoint: a chunk goes when it has `maxLines` lines,
// when `maxSeconds` have passed since its first line (a quiet source is still checked), or when
// it reaches `maxChars` (a bound on what one request carries).
export interface ChunkerOptions {
  readonly maxLines: number;
  readonly maxSeconds: number;
  readonly maxChars: number;
  readonly onChunk: (text: string) => void;
}

/** Most characters one chunk carries (about 16k tokens); a bigger one is sent early. */
export const MAX_CHUNK_CHARS = 64_000;

export class Chunker {
  readonly #options: ChunkerOptions;
  #lines: string[] = [];
  #chars = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: ChunkerOptions) {
    this.#options = options;
  }

  add(line: string): void {
    if (this.#chars > 0 && this.#chars + line.length + 1 > this.#options.maxChars) this.flush();
    this.#lines.push(line);
    this.#chars += line.length + 1;
    if (this.#lines.length === 1) {
      this.#timer = setTimeout(() => this.flush(), this.#options.maxSeconds * 1000);
    }
    if (this.#lines.length >= this.#options.maxLines) this.flush();
  }

  /** Sends what has gathered, if anything. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#lines.length === 0) return;
    const text = this.#lines.join('\n');
    this.#lines = [];
    this.#chars = 0;
    this.#options.onChunk(text);
  }
}
