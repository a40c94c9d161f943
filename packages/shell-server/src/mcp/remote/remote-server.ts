// One remote MCP server whose tools Ahma offers (SPEC §10, R14.1, R14.7): connected in the
// background through @ahma/remote (OAuth when it asks), its tools listed as `<server>_<tool>` with
// their schemas, calls forwarded with progress, cancellation and the remote's `isError`, and its
// tools/list_changed followed. A remote that is not connected never crashes or stalls Ahma: its
// known tools (or, before any are known, one `<server>_connect` tool) answer with a tool error
// saying why and what to do — the login URL to open, or that it is unreachable — and the next call
// tries again. Calls are bounded (the command timeout, renewed by the remote's progress).
import {
  connectHttp,
  type CallbackListener,
  type HttpConnection,
  type TokenStore,
} from '@ahma/remote';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { SERVER_NAME, SERVER_VERSION } from '../../version.js';
import { toolError } from '../results.js';
import { NEVER_A_TASK, type CallContext, type ToolEntry, type ToolOutcome } from '../tools/tool.js';
import type { RemoteServerConfig } from './mcp-config.js';

export interface RemoteServerOptions {
  readonly store: TokenStore;
  readonly callbacks: CallbackListener;
  readonly logger: Logger;
  /** Bound on one forwarded call without progress (ms). */
  readonly callTimeoutMs: number;
  /** Bound on connecting (each request of it; the user's time to log in is apart). */
  readonly connectTimeoutMs: number;
  /** How long a login waits for the user. */
  readonly loginTimeoutMs: number;
  /** The tools changed (connected, listed again, or lost). */
  readonly onChange: () => void;
}

type Status =
  | { readonly kind: 'connecting' }
  | { readonly kind: 'connected'; readonly connection: HttpConnection }
  | { readonly kind: 'login'; readonly url: URL }
  | { readonly kind: 'failed'; readonly reason: string };

export class RemoteServer {
  readonly config: RemoteServerConfig;
  readonly #options: RemoteServerOptions;
  #status: Status = { kind: 'connecting' };
  #connecting: Promise<void> | undefined;
  #entries: readonly ToolEntry[] = [];
  #closed = false;
  /** Wakes a call waiting for the connection when the remote asks for a login instead. */
  #loginAsked: (() => void) | undefined;

  constructor(config: RemoteServerConfig, options: RemoteServerOptions) {
    this.config = config;
    this.#options = options;
    this.#entries = [this.#placeholder()];
  }

  /** The tools offered for this server right now. */
  get entries(): readonly ToolEntry[] {
    return this.#entries;
  }

  /** Connects (once at a time); resolves when connected or failed, never rejects. */
  connect(): Promise<void> {
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  /**
   * Connects if not connected, waiting at most the connect timeout and never for a login: a call
   * answers at once with the URL while the user has yet to log in.
   */
  async #tryConnect(): Promise<void> {
    if (this.#status.kind === 'login' && this.#connecting !== undefined) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.connect(),
      new Promise<void>((resolve) => {
        this.#loginAsked = resolve;
        timer = setTimeout(resolve, this.#options.connectTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    this.#loginAsked = undefined;
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#status.kind === 'connected') await this.#status.connection.client.close();
  }

  async #connect(): Promise<void> {
    const { config } = this;
    const { logger } = this.#options;
    this.#status = { kind: 'connecting' };
    try {
      const connection = await connectHttp(
        () => new Client({ name: SERVER_NAME, version: SERVER_VERSION }, { capabilities: {} }),
        {
          url: config.url,
          store: this.#options.store,
          callbackPort: this.#options.callbacks.port,
          callbacks: this.#options.callbacks,
          clientId: config.clientId,
          clientSecret: config.clientSecret,
          authorizationTimeoutMs: this.#options.loginTimeoutMs,
          request: { timeout: this.#options.connectTimeoutMs },
          onAuthorizationUrl: (url) => {
            this.#status = { kind: 'login', url };
            this.#loginAsked?.();
            logger.warn(
              { server: config.name, url: url.href },
              `the remote MCP server ${config.name} asks for a login: open the URL`,
            );
          },
        },
      );
      if (this.#closed) {
        await connection.client.close();
        return;
      }
      connection.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        void this.#list(connection);
      });
      connection.client.onclose = () => this.#lost(connection, 'the connection closed');
      // A response stream that broke (the remote went down mid-call) leaves the call waiting for
      // an answer that cannot come: the connection is closed, which fails its calls at once, and
      // the next call connects again.
      connection.client.onerror = (error) => {
        this.#lost(connection, describe(error));
        void connection.client.close().catch(() => undefined);
      };
      this.#status = { kind: 'connected', connection };
      await this.#list(connection);
      logger.info(
        { server: config.name, tools: this.#entries.length, loggedIn: connection.loggedIn },
        'remote MCP server connected',
      );
    } catch (error) {
      this.#status = { kind: 'failed', reason: describe(error) };
      logger.warn({ server: config.name, err: error }, 'remote MCP server not connected');
    }
  }

  /** `connection` is gone (if it is still the current one): the server is not connected. */
  #lost(connection: HttpConnection, reason: string): void {
    if (this.#status.kind === 'connected' && this.#status.connection === connection) {
      this.#status = { kind: 'failed', reason };
      this.#options.logger.warn({ server: this.config.name, reason }, 'remote MCP server lost');
    }
  }

  /** Lists the remote's tools (every page) and offers them. */
  async #list(connection: HttpConnection): Promise<void> {
    try {
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await connection.client.listTools(cursor === undefined ? {} : { cursor }, {
          timeout: this.#options.connectTimeoutMs,
        });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor !== undefined && tools.length < 10_000);
      this.#entries = tools.map((tool) => this.#entry(tool));
    } catch (error) {
      this.#options.logger.warn(
        { server: this.config.name, err: error },
        'listing remote tools failed',
      );
    }
    this.#options.onChange();
  }

  #entry(remote: Tool): ToolEntry {
    const { name, url } = this.config;
    const tool: Tool = {
      ...remote,
      name: `${name}_${remote.name}`,
      description: `${remote.description ?? remote.name}\n\n(Tool "${remote.name}" of the remote MCP server "${name}", ${url.href}.)`,
      execution: NEVER_A_TASK,
    };
    return {
      tool,
      call: (args, call) => this.#call(remote.name, args, call),
      fromWords: (words) =>
        words.length === 0 ? {} : (JSON.parse(words.join(' ')) as Record<string, unknown>),
    };
  }

  /** Before any tool is known: one tool that says why and tries again. */
  #placeholder(): ToolEntry {
    const { name, url } = this.config;
    return {
      tool: {
        name: `${name}_connect`,
        description: `The remote MCP server "${name}" (${url.href}) is not connected yet, so its tools are not listed. Call this to learn why and what to do (for example a login URL to open); its tools appear once it is connected.`,
        inputSchema: { type: 'object', properties: {} },
        execution: NEVER_A_TASK,
      },
      call: async () => {
        await this.#tryConnect();
        return this.#status.kind === 'connected'
          ? answer({
              content: [
                {
                  type: 'text',
                  text: `${name} is connected: its tools are listed now (tools/list).`,
                },
              ],
            })
          : answer(this.#unavailable());
      },
      fromWords: () => ({}),
    };
  }

  async #call(
    tool: string,
    args: Record<string, unknown>,
    call: CallContext,
  ): Promise<ToolOutcome> {
    if (this.#status.kind !== 'connected') await this.#tryConnect();
    const status = this.#status;
    if (status.kind !== 'connected') return answer(this.#unavailable());
    const { progress } = call;
    try {
      const result = await status.connection.client.callTool(
        { name: tool, arguments: args },
        undefined,
        {
          signal: call.signal,
          timeout: this.#options.callTimeoutMs,
          resetTimeoutOnProgress: true,
          ...(progress === undefined
            ? {}
            : {
                onprogress: ({ progress: done, total, message }) =>
                  void progress(
                    done,
                    message ??
                      `${this.config.name} ${tool}: ${String(done)}${total === undefined ? '' : ` of ${String(total)}`}`,
                  ),
              }),
        },
      );
      return answer(result as CallToolResult);
    } catch (error) {
      if (!call.signal.aborted) {
        // The remote went away mid-call: the next call connects again.
        this.#status = { kind: 'failed', reason: describe(error) };
        void status.connection.client.close().catch(() => undefined);
      }
      return answer(
        toolError(
          `The remote MCP server "${this.config.name}" did not answer ${tool}: ${describe(error)}. ` +
            'The next call connects again.',
        ),
      );
    }
  }

  #unavailable(): CallToolResult {
    const { name, url } = this.config;
    const status = this.#status;
    switch (status.kind) {
      case 'login':
        return toolError(
          `The remote MCP server "${name}" (${url.href}) needs a login. Ask the user to open this URL in a browser on this machine, then call the tool again:\n${status.url.href}`,
        );
      case 'failed':
        return toolError(
          `The remote MCP server "${name}" (${url.href}) is not connected: ${status.reason}. The next call tries again.`,
        );
      default:
        return toolError(
          `The remote MCP server "${name}" (${url.href}) is still connecting; try again shortly.`,
        );
    }
  }
}

function answer(result: CallToolResult): ToolOutcome {
  return { kind: 'answer', result };
}

function describe(error: unknown): string {
  const parts: string[] = [];
  for (let current = error, depth = 0; current !== undefined && depth < 4; depth += 1) {
    const message = current instanceof Error ? current.message : String(current);
    if (message !== '' && !parts.some((part) => part.includes(message))) parts.push(message);
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(': ').replace(/\s+/g, ' ').slice(0, 300) || 'unknown error';
}
