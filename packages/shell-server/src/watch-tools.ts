// Hot reload (issue: tools directory watched): changes to the tools directory are debounced into
// one reload; reloads never overlap, and a change during one schedules exactly one more.
import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from 'pino';

/** Quiet time after the last change before reloading: an editor's save is several events. */
export const RELOAD_DEBOUNCE_MS = 200;

export interface ToolsWatcher {
  close(): void;
}

export function watchToolsDir(
  dir: string,
  reload: () => Promise<void>,
  logger: Logger,
  debounceMs = RELOAD_DEBOUNCE_MS,
): ToolsWatcher {
  let timer: NodeJS.Timeout | undefined;
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

  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dir, { persistent: false }, () => {
      clearTimeout(timer);
      timer = setTimeout(run, debounceMs);
    });
    watcher.on('error', (error) => logger.warn({ err: error, dir }, 'watching the tools stopped'));
    logger.info({ dir }, 'watching the tools directory');
  } catch (error) {
    logger.warn({ err: error, dir }, 'cannot watch the tools directory; hot reload is off');
  }
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      watcher?.close();
    },
  };
}
