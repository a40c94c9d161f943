// `ahma-shell --mode http` (R8.1): one runtime for the process, the HTTP server over it, the URL
// and how to authenticate printed where people and scripts look for them, and a clean end on
// SIGINT/SIGTERM: stop accepting, end the sessions (killing the commands they started), close the
// runtime (the rest of the commands, warm shells, private state). Resolves with the exit code.
import { AhmaError } from '@ahma/core';
import type { RuntimeSettings } from '../../runtime/runtime.js';
import { createRuntime } from '../../runtime/runtime.js';
import type { TrafficEcho } from './echo.js';
import { isolatedChildCommand } from '../../isolation/child-command.js';
import { rootPolicy } from '../../isolation/root-scope.js';
import { startHttpServer } from './server.js';
import { sessionLimitsOf } from './sessions.js';
import { serverToken } from './token.js';
import { RefusalError } from '../../jsonrpc/refusal.js';

export interface ServeHttpOptions {
  /** --http-token-file's or AHMA_HTTP_TOKEN's token; else the server's own (token.ts). */
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
  let server;
  let auth: Authentication;
  try {
    const isolation = isolated
      ? {
          defaultScope: runtime.engine.sandbox.scope,
          roots: await rootPolicy({
            allowedRoots: settings.options.allowedRoots,
            scope: runtime.engine.sandbox.scope,
            env: settings.env,
            privatePaths: [runtime.engine.state.root],
          }),
          env: settings.env,
          childCommand: isolatedChildCommand(settings.options, settings.cwd),
        }
      : undefined;
    auth = await authentication(settings, options.token, runtime.engine.state.root);
    server = await startHttpServer(runtime, {
      host,
      port,
      socket: settings.options.httpSocket,
      token: auth.token,
      echo,
      isolation,
      sessionLimits: sessionLimitsOf(settings.options),
    });
  } catch (error) {
    await runtime.close();
    // A refused start (the unix socket, the token file, the bind) is one line: no stack.
    if (error instanceof RefusalError) {
      logger.fatal({ err: error }, 'cannot serve');
      options.stderr(`ahma-shell: ${error.message}\n`);
      return 1;
    }
    // A refused --allowed-roots explains itself (cli.ts prints it); anything else is a bug.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === undefined || error instanceof AhmaError) throw error;
    logger.fatal({ err: error, host, port }, 'cannot listen');
    options.stderr(`ahma-shell: cannot listen on ${host}:${String(port)} (${code})\n`);
    return 1;
  }
  logger.info(
    {
      url: server.url,
      token: auth.token !== undefined,
      socket: server.socket,
      sessionIsolation: isolated,
    },
    'listening',
  );
  // One write: a script that sees the URL line has the rest too.
  const lines: string[] = [];
  if (port !== undefined) {
    lines.push(`ahma-shell: listening on ${server.url}`);
    if (auth.token === undefined) {
      logger.warn('--http-no-auth: any local process can connect and run commands as this user');
      lines.push(
        'ahma-shell: WARNING: --http-no-auth: any local process can connect and run commands as this user',
      );
    } else {
      lines.push(`ahma-shell: clients must send "Authorization: Bearer <token>"; ${auth.where}`);
    }
  }
  const opsLink = server.opsLink();
  if (opsLink !== undefined) {
    lines.push(
      `ahma-shell: operations page (one-time link; \`ahma-shell doctor\` shows a fresh one): ${opsLink}`,
    );
  }
  if (server.socket !== undefined) {
    lines.push(`ahma-shell: listening on unix socket ${server.socket} (this user only, no token)`);
  }
  options.stderr(`${lines.join('\n')}\n`);

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

interface Authentication {
  /** Undefined: --http-no-auth (or no TCP listener). */
  readonly token: string | undefined;
  /** Where a client finds it, for the start-up line. */
  readonly where: string;
}

/** R8.11: the token given, else the server's own (made once in the private state). */
async function authentication(
  settings: RuntimeSettings,
  given: string | undefined,
  stateRoot: string,
): Promise<Authentication> {
  const { httpNoAuth, httpTokenFile, httpPort } = settings.options;
  if (httpNoAuth || httpPort === undefined) return { token: undefined, where: '' };
  if (given !== undefined) {
    return {
      token: given,
      where:
        httpTokenFile === undefined
          ? "the token is AHMA_HTTP_TOKEN's value"
          : `the token is in ${httpTokenFile}`,
    };
  }
  const own = await serverToken(stateRoot);
  return { token: own.token, where: `the token is in ${own.path}` };
}
