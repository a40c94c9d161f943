// Logging (R16): pino. By default a daily rolling file in the user's cache directory, without
// colours; --log-to-stderr gives human-readable coloured lines on stderr. Never stdout: in stdio
// mode stdout carries only the MCP protocol.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import roll from 'pino-roll';

export type { Logger };

export interface LoggingOptions {
  readonly logToStderr: boolean;
  readonly debug: boolean;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** `$XDG_CACHE_HOME/ahma/logs`, else the platform's cache directory. */
export function logDirectory(
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  const xdg = env['XDG_CACHE_HOME'];
  if (xdg !== undefined && xdg !== '') return join(xdg, 'ahma', 'logs');
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Caches', 'ahma', 'logs');
  return join(homedir(), '.cache', 'ahma', 'logs');
}

export async function createLogger(options: LoggingOptions): Promise<Logger> {
  const level = options.debug ? 'debug' : 'info';
  if (options.logToStderr) {
    // Loaded only when asked for: it is the largest part of the logging stack.
    const { PinoPretty: pretty } = await import('pino-pretty');
    return pino({ level }, pretty({ destination: 2, colorize: true, sync: true }));
  }
  const stream = await roll({
    file: join(logDirectory(options.env), 'ahma'),
    extension: '.log',
    frequency: 'daily',
    dateFormat: 'yyyy-MM-dd',
    mkdir: true,
  });
  return pino({ level }, stream);
}
