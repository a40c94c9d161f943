// `--http-socket PATH` (R8.11): the HTTP endpoints on a unix socket, for the server's own uid only
// and without a token. Who connects is learnt from the kernel (SO_PEERCRED, read by the native
// helper before a byte of the connection is read), never from what a client sends: a connection of
// another uid is refused even when the socket's mode would let it connect. Around that check:
// - the socket lives in a directory only the server's uid (or root) can write, made 0700 when
//   missing, so nobody else can put a socket of theirs at PATH for its clients to talk to;
// - a socket left by a server that is gone is replaced; a live one, or anything that is not a
//   socket, is refused and left alone;
// - the socket is bound under a temporary name, made 0600 and renamed into place, so PATH never
//   names a socket that is open to others or half set up, and libuv's unlink at close (of the name
//   it bound) never removes a socket that has since replaced ours: we remove PATH ourselves, only
//   while it is still our inode.
import { randomBytes } from 'node:crypto';
import { lstatSync, unlinkSync } from 'node:fs';
import { chmod, lstat, mkdir, realpath, rename, stat } from 'node:fs/promises';
import type { Server } from 'node:http';
import { connect, createServer, type Server as NetServer, type Socket } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import { peerCredentialReader, type PeerCredentials } from '@ahma/core';
import type { Logger } from 'pino';
import { refusal, RefusalError } from '../../jsonrpc/refusal.js';

/** Connections of the unix socket whose peer was checked to be this server's uid. */
const verified = new WeakSet<Socket>();

/** True for a connection of the unix socket whose peer runs as the server's uid. */
export function isVerifiedPeer(socket: Socket): boolean {
  return verified.has(socket);
}

/** sun_path holds 108 bytes, its terminating NUL included. */
const MAX_PATH_BYTES = 107;
/** The temporary name the socket is bound under: `.ahma-` and 6 hex digits. */
const TEMPORARY_NAME_BYTES = 12;
/** How long a connection to an existing socket may take before it counts as live. */
const PROBE_TIMEOUT_MS = 2000;
/** What a client of another uid reads before the connection closes. */
const FORBIDDEN_BODY = "This socket serves only its server's user.\n";
const FORBIDDEN =
  'HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n' +
  `Content-Length: ${String(Buffer.byteLength(FORBIDDEN_BODY))}\r\n\r\n${FORBIDDEN_BODY}`;

/** Listens on `path` and hands the connections of the server's uid to `http`. */
export async function listenUnixSocket(
  http: Server,
  path: string,
  logger: Logger,
): Promise<NetServer> {
  const target = resolve(path);
  // Why the socket cannot be set up: one line naming the path and the fix (the CLI prints it).
  const refuse = (why: string) =>
    new RefusalError(refusal('start', `--http-socket ${path}: ${why}`));
  const uid = process.geteuid?.();
  if (process.platform !== 'linux' || uid === undefined) {
    throw refuse(
      'needs Linux (the check of who connects, SO_PEERCRED, is made by the Linux sandbox helper)',
    );
  }
  checkLength(target, refuse);
  const dir = await prepareDirectory(dirname(target), uid, refuse);
  const socketPath = join(dir, basename(target));
  checkLength(socketPath, refuse);
  if (await clearStale(socketPath, refuse)) {
    logger.info({ socket: socketPath }, 'replacing the stale socket of a server that is gone');
  }
  // Without a TCP listener node:http never tracks its connections (that starts on 'listening'),
  // and closeAllConnections() would leave the socket's keep-alive connections open at close.
  if (!http.listening) http.emit('listening');
  const readPeer = peerCredentialReader();
  const unix = createServer({ pauseOnConnect: true }, (socket) => {
    admit(socket, { http, unix, uid, readPeer, logger, socketPath });
  });
  const temporary = join(dir, `.ahma-${randomBytes(3).toString('hex')}`);
  await new Promise<void>((done, fail) => {
    const failed = (error: Error) => fail(refuse(`cannot listen in ${dir} (${error.message})`));
    unix.once('error', failed);
    unix.listen(temporary, () => {
      unix.off('error', failed);
      done();
    });
  });
  // An accept that fails (EMFILE) must not end the process: the connection is simply not made.
  unix.on('error', (error) =>
    logger.error({ err: error, socket: socketPath }, 'unix socket error'),
  );
  let inode: { dev: number; ino: number };
  try {
    await chmod(temporary, 0o600);
    await rename(temporary, socketPath);
    const st = await lstat(socketPath);
    inode = { dev: st.dev, ino: st.ino };
  } catch (error) {
    unix.close();
    throw refuse(`cannot put the socket in place (${(error as Error).message})`);
  }
  // Synchronous, so the socket is gone before the close callbacks of the HTTP server run.
  unix.on('close', () => {
    try {
      const st = lstatSync(socketPath);
      if (st.dev === inode.dev && st.ino === inode.ino) unlinkSync(socketPath);
    } catch {
      // Already gone.
    }
  });
  logger.info({ socket: socketPath }, 'listening on the unix socket');
  return unix;
}

function checkLength(target: string, refuse: (why: string) => Error): void {
  const name = Buffer.byteLength(basename(target));
  const bytes = Buffer.byteLength(target) + Math.max(0, TEMPORARY_NAME_BYTES - name);
  if (target.includes('\0') || bytes > MAX_PATH_BYTES) {
    throw refuse(
      `the path ${target} is too long for a unix socket (at most ${String(MAX_PATH_BYTES)} bytes, ` +
        'the size of sun_path): choose a shorter one, e.g. under $XDG_RUNTIME_DIR',
    );
  }
}

/**
 * The socket's directory as a real path: made 0700 (each missing parent too) when it is missing;
 * refused when anyone but the server's uid or root could write it or a directory above it (a
 * sticky directory such as /tmp may be above it: nobody can rename another's entry there). The
 * directories above are those of the path as given and of the real path, so a symbolic link on
 * the way is no way around the check.
 */
async function prepareDirectory(
  dir: string,
  uid: number,
  refuse: (why: string) => Error,
): Promise<string> {
  const existing = await stat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw refuse(`cannot inspect the directory ${dir} (${error.message})`);
  });
  if (existing === undefined) await createPrivate(dir, refuse);
  else if (!existing.isDirectory()) throw refuse(`${dir} is not a directory`);
  const real = await realpath(dir);
  const problem = (of: { uid: number; mode: number }, sticky: boolean) =>
    of.uid !== uid && of.uid !== 0
      ? `is owned by uid ${String(of.uid)}`
      : (of.mode & 0o022) !== 0 && !(sticky && (of.mode & 0o1000) !== 0)
        ? `can be written by others (mode ${(of.mode & 0o7777).toString(8)})`
        : undefined;
  const own = problem(await stat(real), false);
  if (own !== undefined) {
    throw refuse(
      `the directory ${real} ${own}: anyone who can write it could replace the socket; use a ` +
        'directory only you can write (a missing one is created 0700), e.g. under $XDG_RUNTIME_DIR',
    );
  }
  for (const above of new Set([...ancestors(dir), ...ancestors(real)])) {
    const why = problem(await stat(above), true);
    if (why !== undefined) {
      throw refuse(
        `the directory ${above} above the socket ${why}: anyone who can write it could swap the ` +
          "socket's directory; use a directory whose parents only you or root can write",
      );
    }
  }
  return real;
}

/** Creates `dir` and its missing parents, each 0700 whatever the umask. */
async function createPrivate(dir: string, refuse: (why: string) => Error): Promise<void> {
  let created: string | undefined;
  try {
    created = await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw refuse(`cannot create the directory ${dir} (${(error as Error).message})`);
  }
  // The umask may have taken bits away from 0700 (it never adds any).
  for (let each = dir; created !== undefined; each = dirname(each)) {
    await chmod(each, 0o700);
    if (each === created || each === dirname(each)) break;
  }
}

/** The directories above `dir`, up to the root. */
function ancestors(dir: string): string[] {
  const found: string[] = [];
  for (let above = dirname(dir); ; above = dirname(above)) {
    found.push(above);
    if (above === dirname(above)) return found;
  }
}

/**
 * Whether `path` is a socket nobody listens on (it is then replaced by the rename); nothing there
 * is false. A live socket, and anything that is not a socket, is refused and never removed.
 */
async function clearStale(path: string, refuse: (why: string) => Error): Promise<boolean> {
  const st = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw refuse(`cannot inspect ${path} (${error.message})`);
  });
  if (st === undefined) return false;
  if (!st.isSocket()) {
    const kind = st.isSymbolicLink()
      ? 'a symbolic link'
      : st.isDirectory()
        ? 'a directory'
        : 'a file';
    throw refuse(`${path} exists and is ${kind}, not a socket: remove it or choose another path`);
  }
  const state = await probe(path);
  if (state === 'live') {
    throw refuse(`another server listens on ${path}: stop it or choose another path`);
  }
  if (state !== 'stale') {
    throw refuse(`cannot tell whether a server listens on ${path} (${state}): remove it if not`);
  }
  return true;
}

/** Connects to an existing socket: 'live', 'stale' (ECONNREFUSED), or the error's code. */
function probe(path: string): Promise<string> {
  return new Promise((settle) => {
    const socket = connect(path);
    const done = (state: string) => {
      clearTimeout(timer);
      socket.destroy();
      settle(state);
    };
    // A listener too busy to accept is still a listener.
    const timer = setTimeout(() => done('live'), PROBE_TIMEOUT_MS);
    socket.once('connect', () => done('live'));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      done(error.code === 'ECONNREFUSED' || error.code === 'ENOENT' ? 'stale' : String(error.code));
    });
  });
}

interface Admission {
  readonly http: Server;
  readonly unix: NetServer;
  readonly uid: number;
  readonly readPeer: (socket: Socket) => Promise<PeerCredentials>;
  readonly logger: Logger;
  readonly socketPath: string;
}

/** A new connection (paused): handed to the HTTP server when its peer is the server's uid. */
function admit(socket: Socket, context: Admission): void {
  const { logger, socketPath } = context;
  // Until node:http takes the connection over, a reset must not become an unhandled 'error'.
  const ignore = () => undefined;
  socket.on('error', ignore);
  context.readPeer(socket).then(
    (peer) => {
      if (socket.destroyed) return;
      if (!context.unix.listening) {
        socket.destroy();
        return;
      }
      if (peer.uid !== context.uid) {
        logger.warn(
          { socket: socketPath, uid: peer.uid, gid: peer.gid, pid: peer.pid },
          'refused a unix socket connection of another user',
        );
        socket.end(FORBIDDEN, () => socket.destroy());
        return;
      }
      verified.add(socket);
      socket.off('error', ignore);
      context.http.emit('connection', socket);
      socket.resume();
    },
    (error: unknown) => {
      logger.error(
        { err: error, socket: socketPath },
        'the peer check of a unix socket connection failed: connection refused',
      );
      socket.destroy();
    },
  );
}
