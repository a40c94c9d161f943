// Reading a file a command may have replaced: never a FIFO or a device (reading one would hang the
// server or read forever), never more than `maxBytes` whatever its size claims (/proc files say 0).
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

export class NotRegularFileError extends Error {}

/** The file's text; ENOENT passes through as the error it is. */
export async function readRegularFile(path: string, maxBytes: number): Promise<string> {
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
  const file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const info = await file.stat();
    if (!info.isFile()) throw new NotRegularFileError('not a regular file');
    // Sized by what the file claims (one read for an honest file), never past the limit.
    const buffer = Buffer.allocUnsafe(Math.min(maxBytes + 1, Math.max(info.size + 1, 64 * 1024)));
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const { bytesRead } = await file.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) throw new NotRegularFileError(`larger than ${String(maxBytes)} bytes`);
      chunks.push(Buffer.from(buffer.subarray(0, bytesRead)));
    }
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    await file.close();
  }
}
