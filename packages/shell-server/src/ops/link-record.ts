// Where the person finds the operations page's one-time link: the server's log (the first one),
// and a file in the server's own private directory that always holds the unused one, which
// `ahma-shell doctor` prints (commands can neither read nor write the private state).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { liveServerDirectories, writeFileAtomicAt } from '@ahma/core';
import type { Logger } from 'pino';

/** The file in `<state root>/servers/<owner>/` holding the unused link. */
export const OPS_LINK_FILE = 'ops-page-link';

/** Records each new link: the first in the log (and on `stderr`), every one in the file. */
export function linkRecorder(
  serverDir: string,
  logger: Logger,
  stderr?: (text: string) => void,
): (link: string) => void {
  let first = true;
  // One write after another: a later link is never overwritten by an earlier one.
  let writing = Promise.resolve();
  return (link) => {
    if (first) {
      first = false;
      logger.info({ link }, 'operations page: open its one-time link in a browser');
      stderr?.(`ahma-shell: operations page (one-time link): ${link}\n`);
    }
    writing = writing
      .then(() => writeFileAtomicAt(join(serverDir, OPS_LINK_FILE), `${link}\n`))
      .catch((error: unknown) => {
        logger.warn({ err: error }, 'could not record the operations page link');
      });
  };
}

/** The unused links of the servers under `stateRoot` that still run (doctor). */
export async function recordedLinks(stateRoot: string): Promise<string[]> {
  const links = await Promise.all(
    (await liveServerDirectories(stateRoot)).map((dir) =>
      readFile(join(dir, OPS_LINK_FILE), 'utf8').then(
        (text) => text.trim(),
        () => '',
      ),
    ),
  );
  return links.filter((link) => link !== '');
}
