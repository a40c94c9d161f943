// ahma-shell's command line, run with what the process gives (main.ts) or in-process by a test:
// parse it, then serve, run one tool, or print usage. It reads nothing of the process itself.
import { AhmaError, type Environment } from '@ahma/core';
import { createLogger } from './logging.js';
import { runOneShot } from './one-shot.js';
import { parseCommandLine, USAGE } from './options.js';
import { SERVER_VERSION } from '../package.js';
import { serveStdio, TTY_REFUSAL } from '../transports/stdio/serve.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Logger } from 'pino';

/** Where the command line writes, and what it knows of its terminal. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** stdin is a terminal: `--mode stdio` refuses it (R8.10). */
  readonly stdinIsTerminal: boolean;
  readonly stderrIsTerminal: boolean;
}

/** Runs `ahma-shell ARGV…`; resolves with the exit code. */
export async function runAhmaShell(
  argv: readonly string[],
  env: Environment,
  cwd: string,
  io: CliIo,
): Promise<number> {
  const out = { stdout: io.stdout, stderr: io.stderr };
  // `ahma-shell doctor [server options] [--json]` (R7.12): what the sandbox enforces here.
  if (argv[0] === 'doctor') {
    const { doctorCommand } = await import('./doctor/command.js');
    return doctorCommand(argv.slice(1), env, cwd, out);
  }
  // `ahma-shell grants list|revoke` (R7.18): the network grants people gave.
  if (argv[0] === 'grants') {
    const { grantsCommand } = await import('./grants.js');
    return grantsCommand(argv.slice(1), env, out);
  }
  const parsed = parseCommandLine(argv, env);
  switch (parsed.kind) {
    case 'help':
      out.stdout(USAGE);
      return 0;
    case 'version':
      out.stdout(`${SERVER_VERSION}\n`);
      return 0;
    case 'usage':
      if (parsed.error === undefined) {
        out.stdout(USAGE);
      } else {
        out.stderr(`ahma-shell: ${parsed.error}\n\n${USAGE}`);
      }
      return 2;
    case 'run':
      break;
  }
  const { options } = parsed;
  const http = options.toolName === undefined && options.mode === 'http';
  let token: string | undefined;
  if (http) {
    const { loadToken } = await import('../transports/http/token.js');
    const source = await loadToken(options.httpTokenFile, env['AHMA_HTTP_TOKEN']);
    if (source.kind === 'error') {
      out.stderr(`ahma-shell: ${source.message}\n`);
      return 2;
    }
    token = source.kind === 'token' ? source.token : undefined;
    const { authRefusal } = await import('../transports/http/server.js');
    const refusal = authRefusal(options.httpHost, token, options.httpNoAuth);
    if (refusal !== undefined) {
      out.stderr(`ahma-shell: ${refusal.message}\n`);
      return 2;
    }
  } else if (options.toolName === undefined && io.stdinIsTerminal) {
    out.stderr(TTY_REFUSAL);
    return 2;
  }
  const logger = await createLogger({
    logToStderr: options.logToStderr,
    debug: options.debug,
    env,
  });
  const settings = { options, env, cwd, logger };
  try {
    if (options.toolName !== undefined) return await runOneShot(settings, out);
    // R7.12: at --debug, the log starts with what the sandbox enforces on this machine (~1 s).
    if (options.debug) {
      const { logDoctorReport } = await import('./doctor/doctor.js');
      await logDoctorReport({ options, env, cwd: settings.cwd, logger });
    }
    if (http) {
      // Loaded only for HTTP: stdio servers start often and need none of it.
      const { serveHttp } = await import('../transports/http/serve.js');
      return await serveHttp(settings, {
        token,
        stderr: out.stderr,
        stderrIsTerminal: io.stderrIsTerminal,
      });
    }
    const opsPort = options.opsPage;
    return await serveStdio(
      settings,
      out.stderr,
      opsPort === undefined ? undefined : (runtime) => opsPageBeside(runtime, opsPort, logger, out),
    );
  } catch (error) {
    // Startup refusals (no sandbox, bad scope) explain themselves; anything else is a bug.
    const message =
      error instanceof AhmaError
        ? error.message
        : error instanceof Error
          ? (error.stack ?? error.message)
          : String(error);
    logger.fatal({ err: error }, 'ahma-shell stopped');
    out.stderr(`ahma-shell: ${message}\n`);
    return 1;
  }
}

/**
 * --ops-page: the operations page on its own loopback port beside a stdio server. A page that
 * cannot listen (the port is taken) is said on stderr and in the log; the MCP server goes on.
 */
async function opsPageBeside(
  runtime: Runtime,
  port: number,
  logger: Logger,
  out: Pick<CliIo, 'stderr'>,
): Promise<{ close(): Promise<void> } | undefined> {
  // Loaded only with --ops-page: stdio servers start often and need none of it.
  const { startOpsPageServer } = await import('../transports/http/ops-server.js');
  const { linkRecorder } = await import('../ops/link-record.js');
  try {
    return await startOpsPageServer(runtime, {
      port,
      logger,
      onLink: linkRecorder(runtime.engine.state.serverDir, logger, out.stderr),
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    logger.error({ err: error, port }, 'the operations page cannot listen');
    out.stderr(
      `ahma-shell: the operations page cannot listen on 127.0.0.1:${String(port)} (${code})\n`,
    );
    return undefined;
  }
}
