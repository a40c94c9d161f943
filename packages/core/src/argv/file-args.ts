// file_arg values (commit messages, long text) are written to private temporary files whose paths
// replace the values on the command line; the files are removed when the invocation is done.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AhmaError } from '../errors.js';

export interface FileArgWriter {
  /** Writes `value` to a new file readable only by this user and returns its path. */
  write(name: string, value: string): Promise<string>;
  /** Removes every file written; safe to call more than once. */
  cleanup(): Promise<void>;
}

export function createFileArgWriter(tempRoot: string = tmpdir()): FileArgWriter {
  let dir: Promise<string> | undefined;
  let count = 0;
  return {
    async write(name, value) {
      dir ??= mkdtemp(join(tempRoot, 'ahma-args-'));
      try {
        const path = join(await dir, `${String(count++)}-${name.replace(/[^A-Za-z0-9_.-]/g, '_')}`);
        await writeFile(path, value, { mode: 0o600, flag: 'wx' });
        return path;
      } catch (error) {
        throw new AhmaError(
          'FILE_ARG_FAILED',
          `argument "${name}": cannot write its temporary file`,
          {
            cause: error,
          },
        );
      }
    },
    async cleanup() {
      const created = dir;
      dir = undefined;
      // A failed mkdtemp created nothing; its rejection was already reported by write().
      const path = await created?.catch(() => undefined);
      if (path !== undefined) await rm(path, { recursive: true, force: true });
    },
  };
}
