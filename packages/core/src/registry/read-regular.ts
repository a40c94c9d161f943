// Reading a file a command may have replaced: never a FIFO or a device (reading one would hang the
// server or read forever), never more than `maxBytes`.
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
    if (info.size > maxBytes) {
      throw new NotRegularFileError(`larger than ${String(maxBytes)} bytes`);
    }
    return await file.readFile('utf8');
  } finally {
    await file.close();
  }
}
