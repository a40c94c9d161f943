// Logging (R16): pino. By default a daily file in the user's cache directory, without colours;
// --log-to-stderr gives human-readable coloured lines on stderr. Never stdout: in stdio mode stdout
// carries only the MCP protocol.
import type { Environment } from '@ahma/core';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { destination, pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

export interface LoggingOptions {
  readonly logToStderr: boolean;
  readonly debug: boolean;
  /** Where XDG_CACHE_HOME is read (the CLI gives the process's environment). */
  readonly env: Environment;
}

/** `$XDG_CACHE_HOME/ahma/logs`, else the platform's cache directory. */
export function logDirectory(env: Environment): string {
  const xdg = env['XDG_CACHE_HOME'];
  if (xdg !== undefined && xdg !== '') return join(xdg, 'ahma', 'logs');
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Caches', 'ahma', 'logs');
  return join(homedir(), '.cache', 'ahma', 'logs');
}

/** The log file of a (local) day: `ahma-YYYY-MM-DD.log`. */
export function logFileName(day: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `ahma-${String(day.getFullYear())}-${pad(day.getMonth() + 1)}-${pad(day.getDate())}.log`;
}

export async function createLogger(options: LoggingOptions): Promise<Logger> {
  const level = options.debug ? 'debug' : 'info';
  if (options.logToStderr) {
    // Loaded only when asked for: it is the largest part of the logging stack.
    const { PinoPretty: pretty } = await import('pino-pretty');
    return pino({ level }, pretty({ destination: 2, colorize: true, sync: true }));
  }
  return pino({ level }, dailyFile(logDirectory(options.env)));
}

/**
 * Appends to today's file and moves to the next day's file at midnight. Writes are synchronous so
 * that no audit line is lost when the server exits right after a command.
 */
function dailyFile(dir: string): DestinationStream {
  const stream = destination({ dest: join(dir, logFileName(new Date())), mkdir: true, sync: true });
  const rollAtMidnight = () => {
    const now = new Date();
    const midnight = new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1);
    setTimeout(() => {
      stream.reopen(join(dir, logFileName(new Date())));
      rollAtMidnight();
    }, midnight.getTime() - now.getTime()).unref();
  };
  rollAtMidnight();
  return stream;
}
