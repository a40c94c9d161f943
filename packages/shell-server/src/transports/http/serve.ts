// `ahma-shell --mode http` (R8.1): one runtime for the process, the HTTP server over it, the URL
// printed where people and scripts look for it, and a clean end on SIGINT/SIGTERM: stop accepting,
// end the sessions (killing the commands they started), close the runtime (the rest of the
// commands, warm shells, private state). Resolves with the exit code.
import type { RuntimeSettings } from '../../runtime.js';
import { createRuntime } from '../../runtime.js';
import type { TrafficEcho } from '../../mcp/http/echo.js';
import { isolatedChildCommand } from '../../sessions/child-command.js';
import { startHttpServer } from './server.js';

export interface ServeHttpOptions {
  readonly token: string | undefined;
  /** The process's stderr: the URL line, and R8B's echo with --log-to-stderr. */
  readonly stderr: (text: string) => void;
  /** Whether stderr is a terminal (the echo's prefixes are coloured there). */
  readonly stderrIsTerminal: boolean;
}

export async function serveHttp(
  settings: RuntimeSettings,
  options: ServeHttpOptions,
): Promise<number> {
  const { logger } = settings;
  const { httpHost: host, httpPort: port, logToStderr } = settings.options;
  const echo: TrafficEcho | undefined = logToStderr
    ? { write: options.stderr, colour: options.stderrIsTerminal }
    : undefined;
  const isolated = settings.options.sessionIsolation;
  // With --session-isolation commands run only in the sessions' own processes (R8D.3): the
  // server's runtime resolves the default scope and lists nothing it runs, so no warm shells.
  const runtime = await createRuntime(
    isolated ? { ...settings, options: { ...settings.options, noShellPool: true } } : settings,
  );
  const isolation = isolated
    ? {
        defaultScope: runtime.engine.sandbox.scope,
        privatePaths: [runtime.engine.state.root],
        env: settings.env,
        childCommand: isolatedChildCommand(settings.options, settings.cwd),
      }
    : undefined;
  let server;
  try {
    server = await startHttpServer(runtime, {
      host,
      port,
      token: options.token,
      echo,
      isolation,
    });
  } catch (error) {
    await runtime.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === undefined) throw error;
    logger.fatal({ err: error, host, port }, 'cannot listen');
    options.stderr(`ahma-shell: cannot listen on ${host}:${String(port)} (${code})\n`);
    return 1;
  }
  logger.info(
    { url: server.url, token: options.token !== undefined, sessionIsolation: isolated },
    'listening',
  );
  options.stderr(`ahma-shell: listening on ${server.url}\n`);

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  logger.info({ signal, sessions: server.sessions.size }, 'shutting down');
  await server.close();
  await runtime.close();
  logger.info('stopped');
  return 0;
}
