// The last line a running command printed, for its progress heartbeats (SPEC §12): what an agent
// waiting on a long call sees besides the elapsed time. Bounded: only the current line is kept, cut
// to MAX_LINE characters, whatever the command prints.
const MAX_LINE = 200;
/** Escape sequences (colours, cursor moves) are no text. */
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b[@-Z\\-_]/g;

export class LastLine {
  #pending = '';
  #last: string | undefined;

  /** Takes a piece of output (UTF-8; a character split across pieces may show as U+FFFD). */
  push(chunk: Buffer): void {
    const lines = (this.#pending + chunk.toString('utf8')).split(/\r\n|\n|\r/);
    this.#pending = (lines.pop() ?? '').slice(-MAX_LINE * 4);
    for (const line of lines.reverse()) {
      const text = clean(line);
      if (text !== '') {
        this.#last = text;
        return;
      }
    }
  }

  /** The latest non-blank line: the one being written (a progress bar's), else the last one. */
  get line(): string | undefined {
    const pending = clean(this.#pending);
    return pending !== '' ? pending : this.#last;
  }
}

function clean(line: string): string {
  const text = line.replace(ANSI, '').trim();
  return text.length <= MAX_LINE ? text : `${text.slice(0, MAX_LINE)}…`;
}
