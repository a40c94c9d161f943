// Progress of one open request, as either SDK sends it: notifications/progress on the request's
// own stream, only when the request asked for it (a progressToken), never failing the call.
import type { Logger } from 'pino';
import type { ProgressReporter } from '../calls/heartbeat.js';

export interface ProgressNotification {
  readonly method: 'notifications/progress';
  readonly params: { progressToken: string | number; progress: number; message: string };
}

/** The reporter of a request with `token`; undefined when it asked for no progress. */
export function progressReporter(
  token: string | number | undefined,
  notify: (notification: ProgressNotification) => Promise<void>,
  logger: Logger,
): ProgressReporter | undefined {
  if (token === undefined) return undefined;
  return (progress, message) =>
    notify({
      method: 'notifications/progress',
      params: { progressToken: token, progress, message },
    }).catch((error: unknown) => logger.warn({ err: error }, 'could not send progress'));
}
