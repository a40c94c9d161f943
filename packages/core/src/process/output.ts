// A command's output, held to a budget: the head and the tail are kept in memory, the middle is
// elided with a marker, and once the output outgrows the budget everything is streamed to a log
// file whose path is returned. A command printing gigabytes never grows the server's memory, and
// its log never grows past the logs' disk budget: a result names a log only when the log holds the
// whole output. What a result shows is cleaned first (ANSI escapes, carriage-return progress bars,
// runs of identical lines); the log keeps the raw bytes.
import type { LogFile, LogStore } from '../state/log-store.js';
import type { ExecutionResult, ExecutionStatus } from './execution-types.js';

/**
 * R15.2: a budget in tokens is estimated as bytes / 4. No tokenizer dependency (each model family
 * has its own, and none is small or cheap to run on every result), and 4 bytes per token is the
 * common estimate for English text, code and logs. Denser text (hashes, base64, CJK) takes more
 * tokens per byte: the default budget leaves room for that below the clients' limits.
 */
export const BYTES_PER_TOKEN = 4;
/**
 * 10,000 tokens (about 40 KB): well under the 25,000-token result limit of Claude Code and the
 * 25–150 KB other clients cut at, and a fair share of a context window for one result.
 */
export const DEFAULT_MAX_OUTPUT_TOKENS = 10_000;
/** The bounds of `--max-output-tokens` and of a call's `max_output_tokens`. */
export const MIN_MAX_OUTPUT_TOKENS = 100;
export const MAX_MAX_OUTPUT_TOKENS = 200_000;

/** The bytes a budget of `tokens` lets a result show (see BYTES_PER_TOKEN). */
export function outputBudgetBytes(tokens: number): number {
  return Math.floor(tokens) * BYTES_PER_TOKEN;
}

export interface OutputLimits {
  /**
   * Bytes of output a result shows at most, elision marker included (the server's max output
   * tokens × BYTES_PER_TOKEN); a call may ask for another budget (OutputCollector).
   */
  readonly budgetBytes: number;
  /** Where full-output logs of truncated commands go, under a disk budget. */
  readonly logs: LogStore;
}

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

/**
 * The line an elision marker takes in an output (OutputCollector.finish), for readers of the
 * command's own output that must skip it (the refusal hints).
 */
export const ELISION_MARKER_LINE = /^\[… \d+ bytes \(\d+ lines?\) left out \(of \d+\); .*…\]$/gmu;

/**
 * Identical consecutive lines are collapsed from this many on: the line once, then a line saying
 * how many more times it came (only when that is shorter than the run itself).
 */
const COLLAPSE_FROM = 3;

/** How the head and the tail share the budget: the end matters more when the command failed. */
const HEAD_SHARE = { completed: 1 / 3, failed: 1 / 5 } as const;
/** While streaming, enough of both ends is kept for either share. */
const HEAD_KEPT = 1 / 2;
const TAIL_KEPT = 4 / 5;

export class OutputCollector {
  readonly #limits: OutputLimits;
  readonly #logName: string;
  /** Bytes the result may show (the marker included). */
  readonly #budget: number;
  readonly #headCap: number;
  readonly #tailCap: number;
  readonly #head: Buffer[] = [];
  #headSize = 0;
  #tail: Buffer[] = [];
  #tailSize = 0;
  /** Whether the tail kept starts a line (the last byte dropped before it ended one). */
  #tailStartsLine = true;
  #total = 0;
  /** Newlines seen (what the marker counts as lines). */
  #lines = 0;
  #log: LogFile | undefined;
  /** Why no log could be created (the directory is gone, …). */
  #logError: string | undefined;

  /**
   * `maxOutputTokens`: this call's budget (a call's `max_output_tokens`); default the limits'.
   */
  constructor(limits: OutputLimits, logName: string, maxOutputTokens?: number) {
    this.#limits = limits;
    this.#logName = logName;
    // A floor far below any allowed budget, so that head and tail are never empty.
    this.#budget = Math.max(
      maxOutputTokens === undefined ? limits.budgetBytes : outputBudgetBytes(maxOutputTokens),
      64,
    );
    this.#headCap = Math.floor(this.#budget * HEAD_KEPT);
    this.#tailCap = Math.floor(this.#budget * TAIL_KEPT);
  }

  /**
   * Adds a chunk. Returns false when the log file is not keeping up, in which case the caller
   * should pause the source until `drained()` resolves.
   */
  push(chunk: Buffer): boolean {
    this.#total += chunk.length;
    this.#lines += countNewlines(chunk);
    if (this.#log === undefined && this.#logError === undefined && this.#total > this.#budget) {
      // Past the budget the output may have to be cut: the log starts. Head and tail keep more
      // than the budget together, so nothing has been evicted yet: they are everything before
      // this chunk. (Cleaned, the output may fit after all: the log is discarded then.)
      this.#openLog([...this.#head, ...this.#tail]);
    }
    let rest = chunk;
    if (this.#headSize < this.#headCap) {
      const take = Math.min(rest.length, this.#headCap - this.#headSize);
      this.#head.push(rest.subarray(0, take));
      this.#headSize += take;
      rest = rest.subarray(take);
    }
    if (rest.length > 0) this.#appendTail(rest);
    return this.#log?.write(chunk) ?? true;
  }

  /** Resolves when the log file has flushed its buffer (immediately when there is none). */
  drained(): Promise<void> {
    return this.#log?.drained() ?? Promise.resolve();
  }

  /**
   * R15.3: the log holding the whole output so far, once there is one (the `output` tool reads a
   * running command's output there).
   */
  get logPath(): string | undefined {
    return this.#log !== undefined && this.#log.problem === undefined ? this.#log.path : undefined;
  }

  /**
   * R15.3: the raw bytes kept so far, head and tail, and how many the output has had in all: they
   * are the whole output while the two add up to `totalBytes` (read by the `output` tool).
   */
  kept(): { readonly head: Buffer; readonly tail: Buffer; readonly totalBytes: number } {
    return {
      head: Buffer.concat(this.#head),
      tail: Buffer.concat(this.#tail),
      totalBytes: this.#total,
    };
  }

  /**
   * Closes the log file and renders the kept output: cleaned, and within the budget. How the
   * command ended (`status`) decides the shares: a third of the budget for the head and the rest
   * for the tail after a success; a fifth for the head after a failure, a timeout or a cancel
   * (where the error usually is at the end).
   */
  async finish(status: ExecutionStatus): Promise<CollectedOutput> {
    const everything = this.#total <= this.#headSize + this.#tailSize;
    const all = everything ? Buffer.concat([...this.#head, ...this.#tail]) : undefined;
    if (all !== undefined) {
      const whole = cleanText(all);
      if (Buffer.byteLength(whole) <= this.#budget) {
        // Raw it outgrew the budget, cleaned it fits: no result names the log.
        await this.#log?.discard();
        return {
          output: whole,
          truncated: false,
          fullOutputPath: undefined,
          totalBytes: this.#total,
        };
      }
    }
    // Within the budget raw, over it decoded (invalid UTF-8 shows as 3-byte U+FFFD): the log the
    // marker names starts now, with every byte.
    if (all !== undefined && this.#log === undefined && this.#logError === undefined) {
      this.#openLog([all]);
    }
    const log = this.#log;
    const ref = operationRef(this.#logName);
    const full = `full output: ${log?.path ?? ''}; read any part with the \`output\` tool: ${ref}`;
    const deleted = `the full output log was deleted: output logs are kept within a ${this.#limits.logs.describeBudget()} disk budget, oldest deleted first`;
    const unsaved = `the full output could not be saved: ${this.#logError ?? 'no log'}`;
    const marker = (bytes: number, lines: number, where: string) =>
      `\n[… ${String(bytes)} bytes (${String(lines)} line${lines === 1 ? '' : 's'}) left out (of ${String(this.#total)}); ${where} …]\n`;
    // The marker counts against the budget; sized for the largest counts it can hold.
    const reserve = Math.max(
      ...[full, deleted, log === undefined ? unsaved : (log.problem ?? '')].map((where) =>
        Buffer.byteLength(marker(this.#total, this.#lines, where)),
      ),
    );
    const keep = Math.max(this.#budget - reserve, Math.floor(this.#budget / 4));
    const headShare = Math.floor(
      keep * HEAD_SHARE[status === 'completed' ? 'completed' : 'failed'],
    );

    let head: Kept;
    let tail: Kept;
    if (all !== undefined) {
      head = keepHead(all, headShare);
      tail = keepTail(all.subarray(head.raw), keep - head.size);
    } else {
      // The cuts fall on character boundaries: a character split by a cut is left out whole
      // rather than decoded into U+FFFD halves.
      // The line a cut fell in is left out too (cleaned, a fragment of a progress bar shows as
      // noise), unless it is most of what was kept (one long line).
      const start = withoutCutLine(wholeCharactersBefore(Buffer.concat(this.#head)), 'end');
      const end = this.#tailStartsLine
        ? wholeCharactersAfter(Buffer.concat(this.#tail))
        : withoutCutLine(wholeCharactersAfter(Buffer.concat(this.#tail)), 'start');
      head = keepHead(start, headShare);
      tail = keepTail(end, keep - head.size);
      // A tail that cleaned down to less than its share leaves the rest to the head.
      if (tail.raw === end.length && head.raw < start.length) {
        head = keepHead(start, keep - tail.size);
      }
    }
    const omitted = this.#total - head.raw - tail.raw;
    if (omitted <= 0) {
      await log?.discard();
      return {
        output: head.text + tail.text,
        truncated: false,
        fullOutputPath: undefined,
        totalBytes: this.#total,
      };
    }
    const omittedLines = Math.max(0, this.#lines - head.lines - tail.lines);
    const shown = marker(omitted, omittedLines, full);
    await log?.close({ marker: shown, replacement: marker(omitted, omittedLines, deleted) });
    const problem = log === undefined ? unsaved : log.problem;
    return {
      output: `${head.text}${problem === undefined ? shown : marker(omitted, omittedLines, problem)}${tail.text}`,
      truncated: true,
      fullOutputPath: problem === undefined ? log?.path : undefined,
      totalBytes: this.#total,
    };
  }

  #appendTail(chunk: Buffer): void {
    this.#tail.push(chunk);
    this.#tailSize += chunk.length;
    while (this.#tailSize > this.#tailCap) {
      const first = this.#tail[0];
      if (first === undefined) break;
      const excess = this.#tailSize - this.#tailCap;
      if (first.length <= excess) {
        this.#tail.shift();
        this.#tailSize -= first.length;
        this.#tailStartsLine = first[first.length - 1] === 0x0a;
      } else {
        this.#tail[0] = first.subarray(excess);
        this.#tailSize -= excess;
        this.#tailStartsLine = first[excess - 1] === 0x0a;
      }
    }
  }

  /** Starts the log file with the output so far; later chunks are appended as they arrive. */
  #openLog(earlier: readonly Buffer[]): void {
    try {
      this.#log = this.#limits.logs.create(this.#logName);
    } catch (error) {
      this.#logError = error instanceof Error ? error.message : String(error);
      return;
    }
    for (const buffer of earlier) this.#log.write(buffer);
  }
}

/**
 * The operation a log name is of, and the step for a sequence's step (whose log is named
 * `<id>-stepN`, see runSequence).
 */
export function logNameParts(logName: string): { id: string; step: number | undefined } {
  const match = /^(.*)-step(\d+)$/u.exec(logName);
  return match?.[1] === undefined
    ? { id: logName, step: undefined }
    : { id: match[1], step: Number(match[2]) };
}

/**
 * How the `output` tool reads an operation's full output: `{"id": "op_…"}`, and for a sequence's
 * step `{"id": "op_…", "step": N}`.
 */
export function operationRef(logName: string): string {
  const { id, step } = logNameParts(logName);
  return step === undefined
    ? `{"id": ${JSON.stringify(id)}}`
    : `{"id": ${JSON.stringify(id)}, "step": ${String(step)}}`;
}

/** Newlines in a chunk (about 35 ms for 50 MiB of 13-byte lines; less for longer ones). */
function countNewlines(chunk: Buffer): number {
  let count = 0;
  for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, at + 1)) count++;
  return count;
}

/** A part of the output as the result shows it, and the raw bytes it stands for. */
interface Piece {
  /** Cleaned, with its line end. */
  readonly text: string;
  /** Its raw byte span in the region. */
  readonly start: number;
  readonly end: number;
  /** A collapsed run's first line ends here and its last one starts here (a line: end, start). */
  readonly firstEnd: number;
  readonly lastStart: number;
}

/**
 * One line as a terminal would leave it: escapes removed, and of a line rewritten with carriage
 * returns (progress bars) only what was written after the last one. Its line end (`\n`, `\r\n`)
 * stays as it was.
 */
function cleanLine(raw: string): string {
  let end = raw.length;
  if (raw.charCodeAt(end - 1) === 0x0a) end--;
  while (end > 0 && raw.charCodeAt(end - 1) === 0x0d) end--;
  const cr = end === 0 ? -1 : raw.lastIndexOf('\r', end - 1);
  const visible = raw.slice(cr + 1, end);
  return (cr < 0 && !visible.includes('\u001b') ? visible : stripAnsi(visible)) + raw.slice(end);
}

/** The region's lines, cleaned, with runs of identical lines collapsed. */
function pieces(region: Buffer): Piece[] {
  const lines: Piece[] = [];
  let start = 0;
  while (start < region.length) {
    const newline = region.indexOf(0x0a, start);
    const end = newline === -1 ? region.length : newline + 1;
    lines.push({
      text: cleanLine(region.toString('utf8', start, end)),
      start,
      end,
      firstEnd: end,
      lastStart: start,
    });
    start = end;
  }
  const out: Piece[] = [];
  for (let i = 0; i < lines.length;) {
    const first = lines[i] as Piece;
    let j = i + 1;
    while (j < lines.length && lines[j]?.text === first.text) j++;
    const count = j - i;
    const last = lines[j - 1] as Piece;
    const collapsed = `${first.text}[… repeated ${String(count - 1)} more times]\n`;
    if (
      count >= COLLAPSE_FROM &&
      first.text.endsWith('\n') &&
      first.text.trim() !== '' &&
      collapsed.length < first.text.length * count
    ) {
      out.push({
        text: collapsed,
        start: first.start,
        end: last.end,
        firstEnd: first.end,
        lastStart: last.start,
      });
    } else {
      for (let k = i; k < j; k++) out.push(lines[k] as Piece);
    }
    i = j;
  }
  return out;
}

/** Raw output as a result shows it. */
function cleanText(raw: Buffer): string {
  return pieces(raw)
    .map((piece) => piece.text)
    .join('');
}

/** What is shown of one end: the text, its size, and the raw bytes and newlines it covers. */
interface Kept {
  readonly text: string;
  readonly size: number;
  readonly raw: number;
  readonly lines: number;
}

/** The start of `region`, cleaned, in at most `share` bytes. */
function keepHead(region: Buffer, share: number): Kept {
  const texts: string[] = [];
  let size = 0;
  let raw = 0;
  for (const piece of pieces(region)) {
    const bytes = Buffer.byteLength(piece.text);
    if (size + bytes <= share) {
      texts.push(piece.text);
      size += bytes;
      raw = piece.end;
      continue;
    }
    // The cut falls on a line end, unless that would leave most of the share unused (a line
    // longer than half of it): then what fits of the line (of a collapsed run, its first line).
    const room = share - size;
    if (room < share / 2) break;
    const firstLine = wholeCharactersBefore(
      region.subarray(piece.start, Math.min(piece.firstEnd, piece.start + room)),
    );
    const text = bytesAtMost(cleanText(firstLine), room, 'start');
    texts.push(text);
    size += Buffer.byteLength(text);
    raw = piece.start + firstLine.length;
    break;
  }
  return { text: texts.join(''), size, raw, lines: countNewlines(region.subarray(0, raw)) };
}

/** The end of `region`, cleaned, in at most `share` bytes. */
function keepTail(region: Buffer, share: number): Kept {
  const texts: string[] = [];
  let size = 0;
  let from = region.length;
  const all = pieces(region);
  for (let i = all.length - 1; i >= 0; i--) {
    const piece = all[i] as Piece;
    const bytes = Buffer.byteLength(piece.text);
    if (size + bytes <= share) {
      texts.push(piece.text);
      size += bytes;
      from = piece.start;
      continue;
    }
    // The cut falls on a line start, unless that would leave most of the share unused (a line
    // longer than half of it): then what fits of the line (of a collapsed run, its last line).
    const room = share - size;
    if (room < share / 2) break;
    const lastLine = wholeCharactersAfter(
      region.subarray(Math.max(piece.lastStart, piece.end - room), piece.end),
    );
    const text = bytesAtMost(cleanText(lastLine), room, 'end');
    texts.push(text);
    size += Buffer.byteLength(text);
    from = piece.end - lastLine.length;
    break;
  }
  const covered = region.subarray(from);
  return {
    text: texts.reverse().join(''),
    size,
    raw: covered.length,
    lines: countNewlines(covered),
  };
}

/**
 * `region` (the head or the tail kept in memory, cut at its `edge`) without the part of a line the
 * cut fell in, unless that part is most of it.
 */
function withoutCutLine(region: Buffer, edge: 'start' | 'end'): Buffer {
  if (edge === 'end') {
    const last = region.lastIndexOf(0x0a);
    const partial = region.length - last - 1;
    return last >= 0 && partial * 2 < region.length ? region.subarray(0, last + 1) : region;
  }
  const first = region.indexOf(0x0a);
  return first >= 0 && (first + 1) * 2 < region.length ? region.subarray(first + 1) : region;
}

/** `text` cut to at most `bytes` of UTF-8 (keeping its start or its end), on whole characters. */
function bytesAtMost(text: string, bytes: number, keep: 'start' | 'end'): string {
  if (Buffer.byteLength(text) <= bytes) return text;
  if (bytes <= 0) return '';
  const all = Buffer.from(text, 'utf8');
  return keep === 'start'
    ? wholeCharactersBefore(all.subarray(0, bytes)).toString('utf8')
    : wholeCharactersAfter(all.subarray(all.length - bytes)).toString('utf8');
}

/** A UTF-8 continuation byte (10xxxxxx). */
const isContinuation = (byte: number) => (byte & 0xc0) === 0x80;

/** Bytes a UTF-8 sequence starting with `lead` has (1 for ASCII and for bytes that lead nothing). */
function sequenceLength(lead: number): number {
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  if (lead >= 0xe0) return lead <= 0xef ? 3 : 1;
  if (lead >= 0xc2) return 2;
  return 1;
}

/** `bytes` without a character cut off at its end (at most the 3 bytes of one). */
export function wholeCharactersBefore(bytes: Buffer): Buffer {
  for (let back = 1; back <= Math.min(4, bytes.length); back++) {
    const byte = bytes[bytes.length - back] ?? 0;
    if (isContinuation(byte)) continue;
    return sequenceLength(byte) > back ? bytes.subarray(0, bytes.length - back) : bytes;
  }
  return bytes;
}

/** `bytes` without the rest of a character cut off at its start (at most 3 continuation bytes). */
export function wholeCharactersAfter(bytes: Buffer): Buffer {
  let start = 0;
  while (start < 3 && start < bytes.length && isContinuation(bytes[start] ?? 0)) start++;
  // More than 3 continuation bytes in a row is not a cut character but invalid input: keep it.
  return start < bytes.length && isContinuation(bytes[start] ?? 0) ? bytes : bytes.subarray(start);
}

/**
 * A stored result as it must be shown now: a log deleted for the budget since the result was made
 * is no longer named, and its elision marker (in the output, and in a sequence's step outputs)
 * says it was deleted. Nothing claims a log that is gone.
 */
export function presentLogs(result: ExecutionResult, logs: LogStore): ExecutionResult {
  const gone = logPaths(result).flatMap((path) => {
    const notes = logs.deletedNotes(path);
    return notes === undefined ? [] : [{ path, notes }];
  });
  if (gone.length === 0) return result;
  // The marker names a path with a random part no command could print before the log existed.
  const rewrite = (text: string) =>
    gone.reduce((out, { notes }) => out.replaceAll(notes.marker, notes.replacement), text);
  const kept = (path: string | undefined) =>
    gone.some((entry) => entry.path === path) ? undefined : path;
  return {
    ...result,
    output: rewrite(result.output),
    fullOutputPath: kept(result.fullOutputPath),
    ...(result.steps === undefined
      ? {}
      : {
          steps: result.steps.map((step) => ({
            ...step,
            output: rewrite(step.output),
            fullOutputPath: kept(step.fullOutputPath),
          })),
        }),
  };
}

/**
 * What a finished operation keeps of its output once the connection (the HTTP session) that
 * started it has ended (OperationManager.ownerEnded): its last 4 KiB. Nobody is waiting for it any
 * more, and 500 of them at the 40 KB a live one keeps by default (10,000 tokens) would hold 20 MB
 * for no one.
 */
export const ENDED_OWNER_OUTPUT_BYTES = 4 * 1024;

/**
 * `result` as an ended connection's operation keeps it: each output (the result's, and its
 * sequence steps') longer than `bytes` is cut to its end, after one line saying what was dropped.
 * Status, exit code and duration are untouched. An output whose log holds the whole of it keeps
 * that log's marker verbatim (so it is rewritten as any other once the log is deleted for the
 * budget, see presentLogs) and its `fullOutputPath`.
 */
export function summarizeResult(
  result: ExecutionResult,
  bytes: number = ENDED_OWNER_OUTPUT_BYTES,
): ExecutionResult {
  const output = summarizeOutput(result.output, result.fullOutputPath, bytes);
  let stepsChanged = false;
  const steps = result.steps?.map((step) => {
    const cut = summarizeOutput(step.output, step.fullOutputPath, bytes);
    if (cut === step.output) return step;
    stepsChanged = true;
    return { ...step, output: cut, truncated: true };
  });
  if (output === result.output && !stepsChanged) return result;
  return {
    ...result,
    output,
    truncated: result.truncated || output !== result.output,
    ...(steps === undefined ? {} : { steps }),
  };
}

function summarizeOutput(
  output: string,
  fullOutputPath: string | undefined,
  bytes: number,
): string {
  const size = Buffer.byteLength(output);
  if (size <= bytes) return output;
  const all = Buffer.from(output, 'utf8');
  let end = wholeCharactersAfter(all.subarray(all.length - bytes)).toString('utf8');
  // The marker of the log holding the whole output (OutputCollector.finish): kept as it is.
  const pathAt =
    fullOutputPath === undefined ? -1 : output.lastIndexOf(`; full output: ${fullOutputPath}; `);
  const markerStart = pathAt < 0 ? -1 : output.lastIndexOf('\n[… ', pathAt);
  const markerEnd = markerStart < 0 ? -1 : output.indexOf(' …]\n', pathAt);
  let marker = '';
  if (markerStart >= 0 && markerEnd >= 0) {
    const afterMarker = markerEnd + ' …]\n'.length;
    const cutAt = output.length - end.length;
    // The end already starts inside or before the marker: keep from the marker on.
    if (cutAt <= afterMarker) end = copied(output.slice(Math.min(cutAt, markerStart)));
    else marker = copied(output.slice(markerStart, afterMarker));
  }
  const kept = Buffer.byteLength(marker) + Buffer.byteLength(end);
  const note = `[… ${String(size - kept)} bytes of this output dropped (of ${String(size)}): the session that started the operation has ended, and only the end of its output is kept …]\n`;
  return `${note}${marker}${end}`;
}

/**
 * A string of its own: V8 may keep a slice as a view of the whole string it was cut from, which
 * would keep the whole output the summary is there to drop.
 */
function copied(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}

/** Every log a result names: its own, and its sequence steps'. */
export function logPaths(result: ExecutionResult): string[] {
  return [result.fullOutputPath, ...(result.steps ?? []).map((step) => step.fullOutputPath)].filter(
    (path): path is string => path !== undefined,
  );
}
