// A command's output, bounded: the head and the tail are kept in memory, the middle is elided with a
// marker, and once the output outgrows the cap everything is streamed to a log file whose path is
// returned. A command printing gigabytes never grows the server's memory, and its log never grows
// past the logs' disk budget: a result names a log only when the log holds the whole output.
import type { LogFile, LogStore } from '../state/log-store.js';
import type { ExecutionResult } from './execution-types.js';

export interface OutputLimits {
  /** Bytes kept from the start of the output. */
  readonly headBytes: number;
  /** Bytes kept from the end of the output. */
  readonly tailBytes: number;
  /** Where full-output logs of truncated commands go, under a disk budget. */
  readonly logs: LogStore;
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
  #log: LogFile | undefined;
  /** Why no log could be created (the directory is gone, …). */
  #logError: string | undefined;

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
    if (
      this.#log === undefined &&
      this.#logError === undefined &&
      this.#total > this.#limits.headBytes + this.#limits.tailBytes
    ) {
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
    return this.#log?.write(chunk) ?? true;
  }

  /** Resolves when the log file has flushed its buffer (immediately when there is none). */
  drained(): Promise<void> {
    return this.#log?.drained() ?? Promise.resolve();
  }

  /** Closes the log file and renders the kept output. */
  async finish(): Promise<CollectedOutput> {
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
    // The cuts fall on character boundaries: a character split by a cut is left out whole rather
    // than decoded into U+FFFD halves.
    const head = wholeCharactersBefore(Buffer.concat(this.#head));
    const tail = wholeCharactersAfter(Buffer.concat(this.#tail));
    const elided = this.#total - head.length - tail.length;
    const marker = (where: string) =>
      `\n[… ${String(elided)} bytes elided (of ${String(this.#total)}); ${where} …]\n`;
    const log = this.#log;
    const full = marker(`full output: ${log?.path ?? ''}`);
    await log?.close({
      marker: full,
      replacement: marker(
        `the full output log was deleted: output logs are kept within a ${this.#limits.logs.describeBudget()} disk budget, oldest deleted first`,
      ),
    });
    const problem =
      log === undefined
        ? `the full output could not be saved: ${this.#logError ?? 'no log'}`
        : log.problem;
    return {
      output: `${decode([head])}${problem === undefined ? full : marker(problem)}${decode([tail])}`,
      truncated: true,
      fullOutputPath: problem === undefined ? log?.path : undefined,
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
    try {
      this.#log = this.#limits.logs.create(this.#logName);
    } catch (error) {
      this.#logError = error instanceof Error ? error.message : String(error);
      return;
    }
    for (const buffer of earlier) this.#log.write(buffer);
  }
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
 * more, and 500 of them at the 48 KiB a live one may keep would hold 24 MiB for no one.
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
  const markerEnd =
    fullOutputPath === undefined ? -1 : output.lastIndexOf(`full output: ${fullOutputPath} …]\n`);
  const markerStart = markerEnd < 0 ? -1 : output.lastIndexOf('\n[… ', markerEnd);
  let marker = '';
  if (markerStart >= 0) {
    const afterMarker = output.indexOf('…]\n', markerEnd) + '…]\n'.length;
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
