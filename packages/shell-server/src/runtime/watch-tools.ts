// Hot reload (SPEC §6): changes to the tools directory are debounced into one reload; reloads never
// overlap, and a change during one schedules exactly one more. A directory that does not exist
// (yet, or any more) is looked for once a second, and loaded when it appears.
import { existsSync, watch, type FSWatcher } from 'node:fs';
import type { Logger } from 'pino';

/** Quiet time after the last change before reloading: an editor's save is several events. */
export const RELOAD_DEBOUNCE_MS = 200;
/** How often a missing tools directory is looked for. */
export const MISSING_DIR_POLL_MS = 1000;

export interface ToolsWatcher {
  /** Stops watching; resolves once a reload in progress has finished. */
  close(): Promise<void>;
}

export function watchToolsDir(
  dir: string,
  reload: () => Promise<void>,
  logger: Logger,
  debounceMs = RELOAD_DEBOUNCE_MS,
): ToolsWatcher {
  let debounce: NodeJS.Timeout | undefined;
  let poll: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;

  const run = (): void => {
    if (closed) return;
    if (running !== undefined) {
      again = true;
      return;
    }
    running = reload()
      .catch((error: unknown) => logger.error({ err: error }, 'reloading the tools failed'))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          run();
        }
      });
  };

  const schedule = (): void => {
    clearTimeout(debounce);
    debounce = setTimeout(run, debounceMs);
  };

  const waitForDir = (): void => {
    poll = setInterval(() => {
      if (!existsSync(dir)) return;
      clearInterval(poll);
      if (start()) schedule(); // it may already hold files
    }, MISSING_DIR_POLL_MS);
    poll.unref();
  };

  /** Watches the directory; false (and polling for it) when it does not exist. */
  const start = (): boolean => {
    if (closed) return false;
    try {
      watcher = watch(dir, { persistent: false }, (_event, file) => {
        if (existsSync(dir)) {
          // Only tool files and tool_guidance.json matter, not an editor's swap and backup files.
          if (file === null || file.endsWith('.json')) schedule();
          return;
        }
        // The directory itself went away: its tools go, and it is looked for again.
        watcher?.close();
        watcher = undefined;
        schedule();
        waitForDir();
      });
      watcher.on('error', (error) => {
        // Start again once the directory can be watched (it is looked for once a second).
        logger.warn({ err: error, dir }, 'watching the tools failed; retrying');
        watcher?.close();
        watcher = undefined;
        waitForDir();
      });
      logger.info({ dir }, 'watching the tools directory');
      return true;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'ENOENT') {
        logger.warn({ err: error, dir }, 'cannot watch the tools directory; hot reload is off');
        return false;
      }
      logger.info({ dir }, 'the tools directory does not exist; it is loaded when it appears');
      waitForDir();
      return false;
    }
  };

  start();
  return {
    async close() {
      closed = true;
      clearTimeout(debounce);
      clearInterval(poll);
      watcher?.close();
      await running;
    },
  };
}
