// A command that is running, whether spawned directly or handed to a warm shell of the pool: its
// output in order, a way to stop it, and its end. The executor supervises both the same way.
import type { ChildProcess } from 'node:child_process';
import { killTree } from './kill-tree.js';

export interface ExitStatus {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the command could not be started or its runner failed. */
  readonly error?: Error;
  /** Why the server had to end the command itself (the watchdog), for the output. */
  readonly note?: string;
}

export interface RunningCommand {
  /** Receives the merged output in order; set once, right after the command is created. */
  onOutput(handler: (chunk: Buffer) => void): void;
  /** Flow control: stop delivering output until resume(). */
  pause(): void;
  resume(): void;
  /** Signals the command's whole process tree (the sandbox helper handles the grace). */
  terminate(signal: NodeJS.Signals): void;
  /**
   * The watchdog's last resort, when the command's supervisor did not end it after terminate():
   * the server kills the tree itself and `exit` settles with a note saying so.
   */
  forceEnd(reason: string): void;
  /** Settles once the command and every process it started are gone, and all output delivered. */
  readonly exit: Promise<ExitStatus>;
}

/** Node has reaped it: its pid is free for reuse. */
const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

const FORCED =
  "the command's supervisor did not end it in time; the server killed its processes itself";

/**
 * Wraps a directly spawned sandbox helper (its own process group, see executor.ts). `pipeCloseMs`:
 * how long after the helper exits its pipes may stay open (Timings.pipeCloseMs).
 */
export function runningChild(child: ChildProcess, pipeCloseMs: number): RunningCommand {
  const streams = [child.stdout, child.stderr].filter((stream) => stream !== null);
  let settle: (status: ExitStatus) => void = () => undefined;
  let forcedBy: string | undefined;
  const exit = new Promise<ExitStatus>((resolve) => {
    settle = resolve;
    let error: Error | undefined;
    let exitWatch: NodeJS.Timeout | undefined;
    child.once('error', (cause) => {
      error = cause;
    });
    child.once('exit', () => {
      // The helper exits only after its whole tree is gone, so the pipes close at once; should a
      // stray descriptor keep one open, stop reading rather than hang.
      exitWatch = setTimeout(() => {
        for (const stream of streams) stream.destroy();
      }, pipeCloseMs);
    });
    child.once('close', (code, signal) => {
      clearTimeout(exitWatch);
      const note = forcedBy === undefined ? {} : { note: forcedBy };
      resolve(error === undefined ? { code, signal, ...note } : { code, signal, error, ...note });
    });
  });
  return {
    onOutput: (handler) => {
      for (const stream of streams) stream.on('data', handler);
    },
    pause: () => {
      for (const stream of streams) stream.pause();
    },
    resume: () => {
      for (const stream of streams) stream.resume();
    },
    terminate: (signal) => {
      if (child.pid === undefined) return;
      if (signal === 'SIGKILL') {
        // The executor's backstop: the helper did not end the tree within its grace (stopped,
        // say). A SIGKILL to its group would orphan what left the group (setsid daemons), so the
        // server kills the whole tree itself, unless the helper was reaped already (its tree is
        // gone with it, and its pid may be someone else's now).
        if (exited(child)) return;
        forcedBy = FORCED;
        void killTree(child.pid);
        return;
      }
      try {
        process.kill(-child.pid, signal);
      } catch {
        child.kill(signal);
      }
    },
    forceEnd: (reason) => {
      const pid = child.pid;
      void (pid === undefined || exited(child) ? Promise.resolve() : killTree(pid)).then(() => {
        for (const stream of streams) stream.destroy();
        settle({ code: null, signal: 'SIGKILL', note: reason });
      });
    },
    exit,
  };
}
