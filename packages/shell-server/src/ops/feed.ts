// What the operations page shows, kept up to date: every operation of the engine (running, queued
// for its workspace, recently finished) with the command line it runs, and the live output of the
// running ones. The output comes from the executor's observer — the same pieces, in the same order,
// that feed a call's progress heartbeats and the full-output log — cleaned of terminal escapes and
// sent to the page's event streams in batches, so a command printing megabytes cannot flood them.
import { StringDecoder } from 'node:string_decoder';
import {
  commandArgv,
  logNameParts,
  stripAnsi,
  type Command,
  type Engine,
  type OperationSnapshot,
} from '@ahma/core';

/** One operation as the page shows it (JSON). */
export interface OpsOperation {
  readonly id: string;
  readonly tool: string;
  readonly status: OperationSnapshot['status'];
  /** ISO times. */
  readonly startedAt: string;
  readonly finishedAt: string | undefined;
  readonly elapsedMs: number;
  /** The command line that runs (or ran last, for a sequence), as words. */
  readonly argv: readonly string[] | undefined;
  readonly cwd: string | undefined;
  /** A sequence's running step. */
  readonly step: number | undefined;
  /** Where it waits for its workspace, if it waits. */
  readonly queued: { readonly position: number; readonly behind: string } | undefined;
  readonly exitCode: number | null | undefined;
  readonly signal: string | null | undefined;
  readonly cancelReason: string | undefined;
}

export type FeedEvent =
  | { readonly type: 'changed' }
  | { readonly type: 'output'; readonly id: string; readonly text: string };

export type FeedListener = (event: FeedEvent) => void;

/** Operations listed at most: the running ones, then the latest finished. */
const MAX_LISTED = 200;
/** Command lines remembered for operations that may still be listed. */
const MAX_COMMANDS = 1000;
/** Output kept per running operation for a page that opens later. */
const TAIL_CHARS = 16 * 1024;
/** How often pending output is sent, and the most one batch carries per operation. */
const FLUSH_MS = 100;
const MAX_BATCH_CHARS = 16 * 1024;

/** Control characters other than tab and newline (a lone \r becomes a newline). */
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

/** Output as the page shows it: no terminal escapes, no control characters but \t and \n. */
export function cleanText(text: string): string {
  return stripAnsi(text).replace(/\r\n?/g, '\n').replace(CONTROLS, '');
}

interface Running {
  readonly decoder: StringDecoder;
  tail: string;
  pending: string;
  /** Characters dropped from `pending` because a batch was full. */
  skipped: number;
}

export class OpsFeed {
  readonly #engine: Engine;
  readonly #listeners = new Set<FeedListener>();
  readonly #commands = new Map<string, { argv: readonly string[]; cwd: string; step?: number }>();
  readonly #running = new Map<string, Running>();
  readonly #stop: (() => void)[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(engine: Engine) {
    this.#engine = engine;
    this.#stop.push(
      engine.executor.observe({
        started: (logName, command, cwd) => this.#started(logName, command, cwd),
        output: (logName, chunk) => this.#output(logName, chunk),
        ended: (logName) => this.#ended(logName),
      }),
      engine.operations.onComplete(() => this.#changed()),
    );
  }

  /** Running operations first (oldest first), then the finished ones, latest first. */
  list(now = Date.now()): OpsOperation[] {
    const snapshots = this.#engine.operations.status();
    const running = snapshots.filter((snapshot) => snapshot.status === 'running');
    const finished = snapshots
      .filter((snapshot) => snapshot.status !== 'running')
      .sort((a, b) => (b.finishedAt?.getTime() ?? 0) - (a.finishedAt?.getTime() ?? 0));
    return [...running, ...finished].slice(0, MAX_LISTED).map((snapshot) => {
      const command = this.#commands.get(snapshot.id);
      const end = snapshot.finishedAt?.getTime() ?? now;
      return {
        id: snapshot.id,
        tool: snapshot.tool,
        status: snapshot.status,
        startedAt: snapshot.startedAt.toISOString(),
        finishedAt: snapshot.finishedAt?.toISOString(),
        elapsedMs: Math.max(0, end - snapshot.startedAt.getTime()),
        argv: command?.argv,
        cwd: command?.cwd,
        step: snapshot.status === 'running' ? command?.step : undefined,
        queued:
          snapshot.queued === undefined
            ? undefined
            : { position: snapshot.queued.position, behind: snapshot.queued.behind },
        exitCode: snapshot.result?.exitCode,
        signal: snapshot.result?.signal,
        cancelReason: snapshot.cancelReason,
      };
    });
  }

  /** What each running operation printed lately (cleaned), for a page that opens now. */
  tails(): { id: string; text: string }[] {
    return [...this.#running].map(([logName, running]) => ({
      id: logNameParts(logName).id,
      text: running.tail,
    }));
  }

  /** Hears every change and piece of output from now on; returns the unsubscribe function. */
  subscribe(listener: FeedListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  close(): void {
    for (const stop of this.#stop.splice(0)) stop();
    clearTimeout(this.#timer);
    this.#listeners.clear();
    this.#running.clear();
  }

  #started(logName: string, command: Command, cwd: string): void {
    const { id, step } = logNameParts(logName);
    this.#commands.delete(id); // re-inserted last: the map's order is its age
    this.#commands.set(id, {
      argv: commandArgv(command),
      cwd,
      ...(step === undefined ? {} : { step }),
    });
    for (const old of this.#commands.keys()) {
      if (this.#commands.size <= MAX_COMMANDS) break;
      this.#commands.delete(old);
    }
    this.#running.set(logName, {
      decoder: new StringDecoder('utf8'),
      tail: '',
      pending: '',
      skipped: 0,
    });
    this.#changed();
  }

  #output(logName: string, chunk: Buffer): void {
    const running = this.#running.get(logName);
    if (running === undefined) return;
    // (An escape sequence split between two pieces may show; the full output is exact.)
    const text = cleanText(running.decoder.write(chunk));
    running.tail = keepEnd(running.tail + text);
    if (this.#listeners.size === 0) return;
    running.pending += text;
    if (running.pending.length > MAX_BATCH_CHARS) {
      running.skipped += running.pending.length - MAX_BATCH_CHARS;
      running.pending = running.pending.slice(-MAX_BATCH_CHARS);
    }
    this.#timer ??= setTimeout(() => this.#flush(), FLUSH_MS);
  }

  #ended(logName: string): void {
    const running = this.#running.get(logName);
    if (running !== undefined) {
      running.pending += cleanText(running.decoder.end());
      this.#flush();
      this.#running.delete(logName);
    }
    this.#changed();
  }

  #flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const [logName, running] of this.#running) {
      if (running.pending === '') continue;
      const skipped =
        running.skipped === 0
          ? ''
          : `\n[… ${String(running.skipped)} characters not shown live; the whole output is below …]\n`;
      const text = skipped + running.pending;
      running.pending = '';
      running.skipped = 0;
      this.#emit({ type: 'output', id: logNameParts(logName).id, text });
    }
  }

  #changed(): void {
    this.#emit({ type: 'changed' });
  }

  #emit(event: FeedEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A page that went away is its stream's business, not the command's.
      }
    }
  }
}

function keepEnd(text: string): string {
  return text.length <= TAIL_CHARS ? text : text.slice(-TAIL_CHARS);
}
