// What core reports to whoever runs it (ARCHITECTURE: core takes a Logger and imports no logging
// library; the server passes its pino logger, whose methods take a message like these).
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
}

/** The default: core says nothing unless it is given somewhere to say it. */
export const silentLogger: Logger = { info: () => undefined, warn: () => undefined };
