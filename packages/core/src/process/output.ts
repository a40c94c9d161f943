// A command's output, bounded: the head and the tail are kept in memory, the middle is elided with a
// marker, and once the output outgrows the cap everything is streamed to a log file whose path is
// returned. A command printing gigabytes never grows the server's memory.
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

export interface OutputLimits {
  /** Bytes kept from the start of the output. */
  readonly headBytes: number;
  /** Bytes kept from the end of the output. */
  readonly tailBytes: number;
  /** Directory for full-output log files of truncated commands. */
  readonly logDir: string;
}

/**
 * 16 KiB + 32 KiB: about 12k tokens of text at most, well under the 25k-token result limit some
 * clients enforce, while the end of the output (where errors usually are) gets the larger share.
 */
export const DEFAULT_HEAD_BYTES = 16 * 1024;
export const DEFAULT_TAIL_BYTES = 32 * 1024;

export interface CollectedOutput {
  readonly output: string;
  readonly truncated: boolean;
  readonly fullOutputPath: string | undefined;
  readonly totalBytes: number;
}

// CSI (colours, cursor moves), OSC (titles, hyperlinks), and every other escape: ESC, optional
// intermediate bytes, a final byte (ESC 7 / ESC 8 cursor save and restore, ESC ( B charset
// selection as in `tput sgr0`, ESC = keypad mode, ESC c reset, ESC M reverse index).
const ANSI =
  // eslint-disable-next-line no-control-regex
  /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[ -/]*[0-~]/g;

/** Removes terminal escape sequences. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

export class OutputCollector {
  readonly #limits: OutputLimits;
  readonly #logName: string;
  readonly #head: Buffer[] = [];
  #headSize = 0;
  #tail: Buffer[] = [];
  #tailSize = 0;
  #total = 0;
  #log: WriteStream | undefined;
  #logPath: string | undefined;
  #logError: Error | undefined;

  constructor(limits: OutputLimits, logName: string) {
    this.#limits = limits;
    this.#logName = logName;
  }

  /**
   * Adds a chunk. Returns false when the log file is not keeping up, in which case the caller
   * should pause the source until `drained()` resolves.
   */
  push(chunk: Buffer): boolean {
    this.#total += chunk.length;
    if (this.#log === undefined && this.#total > this.#limits.headBytes + this.#limits.tailBytes) {
      // Nothing has been evicted yet, so head + tail is everything before this chunk.
      this.#openLog([...this.#head, ...this.#tail]);
    }
    let rest = chunk;
    if (this.#headSize < this.#limits.headBytes) {
      const take = Math.min(rest.length, this.#limits.headBytes - this.#headSize);
      this.#head.push(rest.subarray(0, take));
      this.#headSize += take;
      rest = rest.subarray(take);
    }
    if (rest.length > 0) this.#appendTail(rest);
    if (this.#log === undefined || this.#logError !== undefined) return true;
    return this.#log.write(chunk);
  }

  /** Resolves when the log file has flushed its buffer (immediately when there is none). */
  drained(): Promise<void> {
    const log = this.#log;
    if (log === undefined || !log.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      // A stream that is ending never emits 'drain' (finish() may end it while a caller waits):
      // its 'finish' or 'close' counts too. Every listener goes once one fires: a long output
      // waits here thousands of times.
      const events = ['drain', 'error', 'finish', 'close'] as const;
      const done = () => {
        for (const event of events) log.off(event, done);
        resolve();
      };
      for (const event of events) log.once(event, done);
    });
  }

  /** Closes the log file and renders the kept output. */
  async finish(): Promise<CollectedOutput> {
    const log = this.#log;
    if (log !== undefined) {
      await new Promise<void>((resolve) => {
        log.end(() => resolve());
        log.once('error', () => resolve());
      });
    }
    const decode = (buffers: Buffer[]) => stripAnsi(Buffer.concat(buffers).toString('utf8'));
    const kept = this.#headSize + this.#tailSize;
    if (this.#total <= kept) {
      return {
        output: decode([...this.#head, ...this.#tail]),
        truncated: false,
        fullOutputPath: undefined,
        totalBytes: this.#total,
      };
    }
    const elided = this.#total - kept;
    const where =
      this.#logPath !== undefined && this.#logError === undefined
        ? `full output: ${this.#logPath}`
        : `the full output could not be saved${this.#logError === undefined ? '' : `: ${this.#logError.message}`}`;
    const marker = `\n[… ${String(elided)} bytes elided (of ${String(this.#total)}); ${where} …]\n`;
    return {
      output: `${decode(this.#head)}${marker}${decode(this.#tail)}`,
      truncated: true,
      fullOutputPath: this.#logError === undefined ? this.#logPath : undefined,
      totalBytes: this.#total,
    };
  }

  #appendTail(chunk: Buffer): void {
    this.#tail.push(chunk);
    this.#tailSize += chunk.length;
    while (this.#tailSize > this.#limits.tailBytes) {
      const first = this.#tail[0];
      if (first === undefined) break;
      const excess = this.#tailSize - this.#limits.tailBytes;
      if (first.length <= excess) {
        this.#tail.shift();
        this.#tailSize -= first.length;
      } else {
        this.#tail[0] = first.subarray(excess);
        this.#tailSize -= excess;
      }
    }
  }

  /** Starts the log file with the output so far; later chunks are appended as they arrive. */
  #openLog(earlier: readonly Buffer[]): void {
    this.#logPath = join(this.#limits.logDir, `${this.#logName}.log`);
    const log = createWriteStream(this.#logPath, { flags: 'w', mode: 0o600 });
    log.on('error', (error) => {
      this.#logError = error;
    });
    this.#log = log;
    for (const buffer of earlier) log.write(buffer);
  }
}

/** Creates the log directory; called once by the executor before any command runs. */
export async function ensureLogDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
}
