// A livelog tool's prefilter_regex at run time: only the lines it matches go on to the chunks the
// endpoint checks. Every line of an endless source is matched, and JavaScript's backtracking engine
// can take exponential time on some pattern and line pairs (`(a+)+$`), so, as the output tool's
// grep does (process/output-reader.ts), the matching runs in a worker thread that the server
// watches: a line taking longer than `stallMs` ends the worker, and its batch of lines goes on
// unfiltered (more is checked, nothing is missed). After MAX_STALLS such lines the prefilter is
// switched off for the rest of the run. The server's event loop is never blocked by a pattern.
import { Worker } from 'node:worker_threads';
import type { PrefilterPattern } from './prefilter-pattern.js';

/** Longest time one line may take before the worker is ended. */
export const PREFILTER_STALL_MS = 1000;
/** Lines that took too long before the prefilter is switched off. */
export const PREFILTER_MAX_STALLS = 3;
/** Lines waiting for the worker at most; beyond, new lines are skipped (and counted). */
export const PREFILTER_MAX_WAITING_LINES = 20_000;

export interface PrefilterOptions {
  readonly pattern: PrefilterPattern;
  /** A line that passed (or went on unfiltered), in the source's order. */
  readonly onLine: (line: string) => void;
  /** The prefilter was switched off; every later line goes on unfiltered. */
  readonly onSwitchedOff?: ((reason: string) => void) | undefined;
  readonly stallMs?: number | undefined;
}

/** What the prefilter did with the lines given to it. */
export interface PrefilterCounts {
  readonly lines: number;
  /** Matched, or went on unfiltered. */
  readonly passed: number;
  /** Neither matched nor passed: dropped because the worker was too far behind. */
  readonly skipped: number;
  /** Why the prefilter was switched off, if it was. */
  readonly switchedOff: string | undefined;
}

export class Prefilter {
  readonly #options: PrefilterOptions;
  readonly #stallMs: number;
  readonly #waiting: string[][] = [];
  #waitingLines = 0;
  #worker: Worker | undefined;
  #state: Int32Array | undefined;
  #inFlight: string[] | undefined;
  #poll: NodeJS.Timeout | undefined;
  #stalls = 0;
  #switchedOff: string | undefined;
  #stopped = false;
  #lines = 0;
  #passed = 0;
  #skipped = 0;
  #settled: (() => void)[] = [];

  constructor(options: PrefilterOptions) {
    this.#options = options;
    this.#stallMs = options.stallMs ?? PREFILTER_STALL_MS;
  }

  get counts(): PrefilterCounts {
    return {
      lines: this.#lines,
      passed: this.#passed,
      skipped: this.#skipped,
      switchedOff: this.#switchedOff,
    };
  }

  push(lines: readonly string[]): void {
    if (lines.length === 0 || this.#stopped) return;
    this.#lines += lines.length;
    if (this.#switchedOff !== undefined) {
      this.#pass(lines);
      return;
    }
    if (this.#waitingLines + lines.length > PREFILTER_MAX_WAITING_LINES) {
      this.#skipped += lines.length;
      return;
    }
    this.#waiting.push([...lines]);
    this.#waitingLines += lines.length;
    this.#next();
  }

  /** Resolves when every line pushed so far has passed or been dropped. */
  settled(): Promise<void> {
    if (this.#inFlight === undefined && this.#waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#settled.push(resolve));
  }

  /** Ends the worker; lines still waiting are dropped. */
  stop(): void {
    this.#stopped = true;
    this.#waiting.length = 0;
    this.#waitingLines = 0;
    this.#inFlight = undefined;
    this.#endWorker();
    this.#wake();
  }

  #next(): void {
    if (this.#inFlight !== undefined || this.#stopped) return;
    const batch = this.#waiting.shift();
    if (batch === undefined) {
      this.#wake();
      return;
    }
    this.#waitingLines -= batch.length;
    this.#inFlight = batch;
    const worker = this.#worker ?? this.#startWorker();
    worker.postMessage(batch);
    this.#watch();
  }

  #startWorker(): Worker {
    const state = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
    const worker = new Worker(PREFILTER_WORKER, {
      eval: true,
      workerData: {
        source: this.#options.pattern.source,
        flags: this.#options.pattern.flags,
        state: state.buffer,
      },
      // The server's stdout may be the MCP stream: nothing of the worker's goes there.
      stdout: true,
      stderr: true,
      resourceLimits: { maxOldGenerationSizeMb: 64 },
    });
    worker.stdout.resume();
    worker.stderr.resume();
    // A monitor keeps the process alive by its source; its prefilter never does.
    worker.unref();
    worker.on('message', (matched: Uint8Array) => {
      if (worker !== this.#worker) return;
      const batch = this.#inFlight ?? [];
      this.#inFlight = undefined;
      this.#unwatch();
      this.#pass(batch.filter((_, index) => matched[index] === 1));
      this.#next();
    });
    worker.on('error', (error) => {
      if (worker !== this.#worker) return;
      this.#switchOff(`its worker failed: ${error.message}`);
    });
    this.#worker = worker;
    this.#state = state;
    return worker;
  }

  /** Watches the batch in flight: one line taking longer than stallMs ends the worker. */
  #watch(): void {
    const state = this.#state;
    if (state === undefined) return;
    let watched = -1;
    let since = 0;
    this.#poll = setInterval(
      () => {
        if (Atomics.load(state, 0) !== 1) {
          watched = -1;
          return;
        }
        const started = Atomics.load(state, 1);
        if (started !== watched) {
          watched = started;
          since = performance.now();
        } else if (performance.now() - since >= this.#stallMs) {
          this.#stalled();
        }
      },
      Math.max(10, Math.min(100, this.#stallMs / 4)),
    );
    this.#poll.unref();
  }

  #unwatch(): void {
    clearInterval(this.#poll);
    this.#poll = undefined;
  }

  #stalled(): void {
    this.#stalls++;
    const batch = this.#inFlight ?? [];
    this.#inFlight = undefined;
    this.#endWorker();
    if (this.#stalls >= PREFILTER_MAX_STALLS) {
      this.#pass(batch);
      this.#switchOff(
        `${String(this.#stalls)} lines each took over ${String(this.#stallMs)} ms to match (a pattern with nested or overlapping repetition, like (a+)+, backtracks exponentially on some lines)`,
      );
      return;
    }
    // The stalled batch goes on unfiltered; the next one gets a new worker.
    this.#pass(batch);
    this.#next();
  }

  #switchOff(reason: string): void {
    if (this.#switchedOff !== undefined) return;
    this.#switchedOff = reason;
    this.#endWorker();
    const rest = [...(this.#inFlight ?? []), ...this.#waiting.flat()];
    this.#inFlight = undefined;
    this.#waiting.length = 0;
    this.#waitingLines = 0;
    this.#options.onSwitchedOff?.(reason);
    this.#pass(rest);
    this.#wake();
  }

  #pass(lines: readonly string[]): void {
    for (const line of lines) {
      this.#passed++;
      try {
        this.#options.onLine(line);
      } catch {
        // The receiver reports its own failures; one must not stop the lines after it.
      }
    }
  }

  #endWorker(): void {
    this.#unwatch();
    const worker = this.#worker;
    this.#worker = undefined;
    this.#state = undefined;
    if (worker !== undefined) void worker.terminate();
  }

  #wake(): void {
    if (this.#inFlight !== undefined || this.#waiting.length > 0) return;
    for (const resolve of this.#settled.splice(0)) resolve();
  }
}

/**
 * The matching, as a worker's code (CommonJS, evaluated): for each batch of lines, one byte per
 * line (1: matched). Before each match it marks the shared state busy and counts the line, so the
 * server can end it when one line takes too long.
 */
const PREFILTER_WORKER = String.raw`
'use strict';
const { parentPort, workerData: d } = require('node:worker_threads');
const state = new Int32Array(d.state);
const regex = new RegExp(d.source, d.flags);
parentPort.on('message', (lines) => {
  const matched = new Uint8Array(lines.length);
  for (let i = 0; i < lines.length; i++) {
    Atomics.add(state, 1, 1);
    Atomics.store(state, 0, 1);
    matched[i] = regex.test(lines[i]) ? 1 : 0;
    Atomics.store(state, 0, 0);
  }
  parentPort.postMessage(matched);
});
`;
