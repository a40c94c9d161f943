// Reading a file the server did not make: one an agent names (import_config), or one a command may
// have replaced (the registry file, its lock). Only a regular file is ever opened for reading, and
// never more than `maxBytes` of it is read, whatever its size claims (/proc files say 0).
//
// Opening is not harmless: opening a device runs its driver (/dev/ptmx allocates a terminal,
// /dev/watchdog arms a watchdog, a tape device rewinds), and opening a FIFO can block the server.
// So on Linux the path is first opened with O_PATH, which runs nothing (no driver, no FIFO wait,
// no permission check on the file itself): fstat says what it is, and anything but a regular file
// (a device, a FIFO, a socket, a directory; a symlink to one is followed to it) is refused without
// ever being opened. A regular file is then opened again through /proc/self/fd/N, which names that
// very inode whatever has happened to the path since, and checked once more (same device and
// inode, still regular) before it is read.
//
// Elsewhere (macOS has no O_PATH; a Linux without /proc has no way to reopen the inode) the path is
// stat-ed first, which refuses all of the above without opening them, then opened by path (with
// O_NONBLOCK and O_NOCTTY, so a FIFO does not block and a terminal does not become the server's)
// and checked to be the very file stat-ed. A command that swaps the path for a device between the
// stat and the open gets it opened there: a narrow race, left to these platforms.
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  openSync,
  readSync,
  statSync,
  type Stats,
} from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';

export class NotRegularFileError extends Error {}

/**
 * Open flags Node's `fs.constants` does not define. Numeric flags reach open(2) as they are.
 * O_PATH is 010000000 on every architecture Node runs on Linux (only alpha, parisc and sparc differ,
 * and Node has none of them); O_CLOEXEC is 02000000 there too (libuv adds it anyway).
 */
const EXTRA = constants as Partial<Record<string, number>>;
const O_PATH = process.platform === 'linux' ? (EXTRA['O_PATH'] ?? 0o10000000) : EXTRA['O_PATH'];
const O_CLOEXEC = EXTRA['O_CLOEXEC'] ?? (process.platform === 'linux' ? 0o2000000 : 0);

/** How a file is opened for reading: no blocking on a FIFO, no controlling terminal. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY | O_CLOEXEC;

/**
 * The file's text; ENOENT (and any other failure to find the path: EACCES, ELOOP, ENOTDIR) passes
 * through as the error it is. NotRegularFileError when it is not a regular file or is too large.
 */
export async function readRegularFile(path: string, maxBytes: number): Promise<string> {
  const { file, size } = await openRegular(path, maxBytes);
  try {
    // Sized by what the file claims (one read for an honest file), never past the limit.
    const buffer = Buffer.allocUnsafe(Math.min(maxBytes + 1, Math.max(size + 1, 64 * 1024)));
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const { bytesRead } = await file.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) throw tooLarge(maxBytes);
      chunks.push(Buffer.from(buffer.subarray(0, bytesRead)));
    }
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    await file.close();
  }
}

/**
 * readRegularFile for a synchronous caller (the hand-off paths of a scope, worked out around each
 * command): the same refusals, by the same pinning of the inode, without an await.
 */
export function readRegularFileSync(path: string, maxBytes: number): string {
  const fd = openRegularSync(path, maxBytes);
  try {
    const buffer = Buffer.allocUnsafe(maxBytes + 1);
    let total = 0;
    for (;;) {
      const bytesRead = readSync(fd, buffer, total, buffer.length - total, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) throw tooLarge(maxBytes);
    }
    return buffer.subarray(0, total).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function openRegularSync(path: string, maxBytes: number): number {
  if (O_PATH !== undefined && existsSync('/proc/self/fd')) {
    const pinned = openSync(path, O_PATH | O_CLOEXEC);
    try {
      const info = fstatSync(pinned);
      checkRegular(info, maxBytes);
      return openCheckedSync(`/proc/self/fd/${String(pinned)}`, info);
    } finally {
      closeSync(pinned);
    }
  }
  const info = statSync(path);
  checkRegular(info, maxBytes);
  return openCheckedSync(path, info);
}

function openCheckedSync(path: string, expected: Stats): number {
  const fd = openSync(path, READ_FLAGS);
  try {
    sameRegularFile(fstatSync(fd), expected);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** `path` opened for reading, known to be a regular file no larger than `maxBytes` (it claims). */
async function openRegular(
  path: string,
  maxBytes: number,
): Promise<{ file: FileHandle; size: number }> {
  if (O_PATH !== undefined && existsSync('/proc/self/fd')) {
    const pinned = await open(path, O_PATH | O_CLOEXEC);
    try {
      const info = await pinned.stat();
      checkRegular(info, maxBytes);
      const reopen = `/proc/self/fd/${String(pinned.fd)}`;
      return await openChecked(reopen, info).catch((error: unknown) => {
        // EACCES and the like: said of the path the caller gave, not of /proc/self/fd/N.
        const failure = error as NodeJS.ErrnoException;
        if (failure.path === reopen) failure.path = path;
        if (error instanceof Error) error.message = error.message.replaceAll(reopen, path);
        throw error;
      });
    } finally {
      await pinned.close();
    }
  }
  const info = await stat(path);
  checkRegular(info, maxBytes);
  return openChecked(path, info);
}

/** Opens `path` for reading and checks it is the regular file `expected` describes. */
async function openChecked(
  path: string,
  expected: Stats,
): Promise<{ file: FileHandle; size: number }> {
  const file = await open(path, READ_FLAGS);
  try {
    const info = await file.stat();
    sameRegularFile(info, expected);
    return { file, size: info.size };
  } catch (error) {
    await file.close();
    throw error;
  }
}

/** What was opened is the regular file stat-ed before (not one swapped in meanwhile). */
function sameRegularFile(info: Stats, expected: Stats): void {
  if (info.dev !== expected.dev || info.ino !== expected.ino) {
    throw new NotRegularFileError('it was replaced while being opened; nothing was read');
  }
  checkRegular(info, Number.POSITIVE_INFINITY);
}

function checkRegular(info: Stats, maxBytes: number): void {
  if (!info.isFile()) throw new NotRegularFileError(`it is ${kindOf(info)}, not a regular file`);
  if (info.size > maxBytes) throw tooLarge(maxBytes);
}

function tooLarge(maxBytes: number): NotRegularFileError {
  return new NotRegularFileError(`larger than ${String(maxBytes)} bytes`);
}

function kindOf(info: Stats): string {
  if (info.isDirectory()) return 'a directory';
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isSocket()) return 'a socket';
  if (info.isSymbolicLink()) return 'a symbolic link';
  return 'of an unknown type';
}
