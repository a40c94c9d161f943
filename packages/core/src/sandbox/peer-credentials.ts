// Who is at the other end of a unix socket connection: the kernel's record of the process that
// called connect() (SO_PEERCRED), for ahma-shell's --http-socket (R8.11), which serves its own uid
// only and must know the peer before it reads a byte. Node has no API for it, so the native helper
// answers (`ahma-sandbox --peer-cred`, native/peercred.c), given the accepted connection as its
// descriptor 3. Every connection is asked anew (nothing is cached: a uid is not a connection), a
// few helpers run at once and a bounded number of connections wait for one; anything that goes
// wrong rejects, so the caller refuses the connection (fail closed).
import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { defaultHelperPath } from './helper-binary.js';

export interface PeerCredentials {
  readonly uid: number;
  readonly gid: number;
  /** 0 when the peer is in a pid namespace the server cannot see. */
  readonly pid: number;
}

export interface PeerCredentialOptions {
  /** The sandbox helper (default: core's own, like the sandbox's). */
  readonly helperPath?: string;
  /** Helpers running at once (default 4). */
  readonly concurrency?: number;
  /** Connections waiting for a helper beyond those (default 64); more are rejected at once. */
  readonly maxWaiting?: number;
  /** A helper that has not answered by then is killed and the connection rejected (default 5 s). */
  readonly timeoutMs?: number;
}

/** Reads the peer credentials of accepted unix socket connections (paused: nothing is read). */
export type PeerCredentialReader = (socket: Socket) => Promise<PeerCredentials>;

export function peerCredentialReader(options: PeerCredentialOptions = {}): PeerCredentialReader {
  const helperPath = options.helperPath ?? defaultHelperPath();
  const concurrency = options.concurrency ?? 4;
  const maxWaiting = options.maxWaiting ?? 64;
  const timeoutMs = options.timeoutMs ?? 5000;
  let running = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next === undefined) running--;
    else next();
  };
  return async (socket) => {
    if (running >= concurrency) {
      if (waiting.length >= maxWaiting) {
        throw new Error(
          `${String(concurrency + maxWaiting)} connections are already waiting for their peer check`,
        );
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    } else {
      running++;
    }
    try {
      return await askHelper(helperPath, socket, timeoutMs);
    } finally {
      release();
    }
  };
}

function askHelper(
  helperPath: string,
  socket: Socket,
  timeoutMs: number,
): Promise<PeerCredentials> {
  return new Promise((resolve, reject) => {
    // A connection its client already dropped has no descriptor left to pass.
    if (socket.destroyed) {
      reject(new Error('the client closed the connection before its peer check'));
      return;
    }
    // The helper needs nothing of the server's environment (which may hold secrets).
    const child = spawn(helperPath, ['--peer-cred'], {
      stdio: ['ignore', 'pipe', 'pipe', socket],
      env: {},
    });
    let stdout = '';
    let stderr = '';
    // Bounded: the answer is one short line, an error message a few.
    child.stdout?.on('data', (chunk: Buffer) => {
      if (stdout.length < 256) stdout += chunk.toString('utf8');
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString('utf8');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        new Error(
          error.code === 'ENOENT'
            ? `the sandbox helper ${helperPath} is missing: build @ahma/core (pnpm build), which compiles it with cc`
            : `the sandbox helper ${helperPath} could not be started (${error.message})`,
        ),
      );
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const match = /^(\d+) (\d+) (\d+)\n$/.exec(stdout);
      if (code === 0 && match !== null) {
        resolve({ uid: Number(match[1]), gid: Number(match[2]), pid: Number(match[3]) });
        return;
      }
      const how =
        signal === 'SIGKILL'
          ? `gave no answer within ${String(timeoutMs)} ms`
          : `failed (${signal ?? `exit ${String(code)}`}): ${stderr.trim() || stdout.trim() || 'no output'}`;
      reject(
        new Error(
          `the peer check (${helperPath} --peer-cred) ${how}; if the helper predates --peer-cred, rebuild @ahma/core (pnpm build)`,
        ),
      );
    });
  });
}
