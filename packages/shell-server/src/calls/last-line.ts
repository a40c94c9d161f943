// The last line a running command printed, for its progress heartbeats (SPEC §12): what an agent
// waiting on a long call sees besides the elapsed time. Output passes through here on the hot
// path, so a piece only moves the last WINDOW bytes along; the line is found when a heartbeat asks
// for it (every few seconds), cut to MAX_LINE characters.
const WINDOW = 4096;
const MAX_LINE = 200;
/** Escape sequences (colours, cursor moves) are no text. */
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b[@-Z\\-_]/g;

export class LastLine {
  #tail: Buffer = Buffer.alloc(0);

  /** Takes a piece of output. */
  push(chunk: Buffer): void {
    if (chunk.length >= WINDOW) {
      this.#tail = Buffer.from(chunk.subarray(chunk.length - WINDOW));
      return;
    }
    const keep = Math.min(this.#tail.length, WINDOW - chunk.length);
    this.#tail = Buffer.concat([this.#tail.subarray(this.#tail.length - keep), chunk]);
  }

  /**
   * The latest non-blank line: the one being written (a progress bar redrawn with \r), else the
   * last complete one; undefined before any. A character cut at the window's start may show as
   * U+FFFD.
   */
  get line(): string | undefined {
    const lines = this.#tail.toString('utf8').split(/\r\n|\n|\r/);
    for (let i = lines.length - 1; i >= 0; i--) {
      const text = (lines[i] ?? '').replace(ANSI, '').trim();
      if (text !== '') return text.length <= MAX_LINE ? text : `${text.slice(0, MAX_LINE)}…`;
    }
    return undefined;
  }
}
