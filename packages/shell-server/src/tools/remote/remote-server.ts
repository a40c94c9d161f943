// One remote MCP server whose tools Ahma offers (SPEC §10, R14.1, R14.7): connected in the
// background through @ahma/remote (OAuth when it asks), its tools listed as `<server>_<tool>` with
// their schemas, calls forwarded with progress, cancellation and the remote's `isError`, and its
// tools/list_changed followed. A remote that is not connected never crashes or stalls Ahma: its
// known tools (or, before any are known, one `<server>_connect` tool) answer with a tool error
// saying why and what to do — the login URL to open, or that it is unreachable — and the next call
// tries again. Calls are bounded (the command timeout, renewed by the remote's progress). The
// first connection's outcome is awaitable (`firstAttempt`): tools/list waits a little for it, so a
// remote that needs no login has its tools in a client's first list (remote-tools.ts).
import {
  ACCEPT_ANY_OUTPUT,
  connectHttp,
  messageOf,
  oneLine,
  type CallbackListener,
  type HttpConnection,
  type TokenStore,
} from '@ahma/remote';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { SERVER_NAME, SERVER_VERSION } from '../../package.js';
import { toolError } from '../../calls/results.js';
import { NEVER_A_TASK, type CallContext, type ToolEntry, type ToolOutcome } from '../tool.js';
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

/** A tool name clients accept (the Claude API's rule, the strictest in use). */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** Bounds on one listing: a remote cannot make Ahma page or hold without end. */
const MAX_PAGES = 100;
const MAX_TOOLS = 1000;

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
  #listing: Promise<void> | undefined;
  #listAgain = false;
  #firstAttemptOver = false;
  #endFirstAttempt: () => void = () => undefined;
  /**
   * Settles once the first connection has an outcome: connected with its tools listed, failed, or
   * a login asked for (which is the user's to give, so never waited for).
   */
  readonly firstAttempt: Promise<void>;

  constructor(config: RemoteServerConfig, options: RemoteServerOptions) {
    this.config = config;
    this.#options = options;
    this.#entries = [this.#placeholder()];
    this.firstAttempt = new Promise<void>((resolve) => {
      this.#endFirstAttempt = () => {
        this.#firstAttemptOver = true;
        resolve();
      };
    });
  }

  /** Whether `firstAttempt` has settled. */
  get firstAttemptOver(): boolean {
    return this.#firstAttemptOver;
  }

  /** The tools offered for this server right now. */
  get entries(): readonly ToolEntry[] {
    return this.#entries;
  }

  /** Connects (once at a time); resolves when connected or failed, never rejects. */
  connect(): Promise<void> {
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined;
      this.#endFirstAttempt();
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
    this.#endFirstAttempt();
    if (this.#status.kind === 'connected') await this.#status.connection.client.close();
  }

  async #connect(): Promise<void> {
    const { config } = this;
    const { logger } = this.#options;
    this.#status = { kind: 'connecting' };
    try {
      const connection = await connectHttp(
        () =>
          new Client(
            { name: SERVER_NAME, version: SERVER_VERSION },
            { capabilities: {}, jsonSchemaValidator: ACCEPT_ANY_OUTPUT },
          ),
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
            this.#endFirstAttempt();
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

  /**
   * Lists the remote's tools and offers them: one listing at a time, and one more after it when
   * the remote said its tools changed meanwhile (a storm of notifications is one or two listings).
   */
  #list(connection: HttpConnection): Promise<void> {
    if (this.#listing !== undefined) {
      this.#listAgain = true;
      return this.#listing;
    }
    this.#listing = (async () => {
      do {
        this.#listAgain = false;
        await this.#listOnce(connection);
      } while (this.#listAgain);
    })().finally(() => {
      this.#listing = undefined;
    });
    return this.#listing;
  }

  async #listOnce(connection: HttpConnection): Promise<void> {
    const { logger } = this.#options;
    try {
      const tools: Tool[] = [];
      const cursors = new Set<string>();
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES && tools.length < MAX_TOOLS; page += 1) {
        const listed = await connection.client.listTools(cursor === undefined ? {} : { cursor }, {
          timeout: this.#options.connectTimeoutMs,
        });
        tools.push(...listed.tools);
        cursor = listed.nextCursor;
        if (cursor === undefined || listed.tools.length === 0 || cursors.has(cursor)) break;
        cursors.add(cursor);
      }
      this.#entries = this.#offered(tools.slice(0, MAX_TOOLS)).map((tool) => this.#entry(tool));
    } catch (error) {
      logger.warn({ server: this.config.name, err: error }, 'listing remote tools failed');
    }
    this.#options.onChange();
  }

  /** The remote tools Ahma can offer: a name clients accept, once, callable without a task. */
  #offered(tools: readonly Tool[]): Tool[] {
    const seen = new Set<string>();
    return tools.filter((tool) => {
      const name = `${this.config.name}_${tool.name}`;
      const problem = !TOOL_NAME.test(name)
        ? 'its name, with the server prefix, is not letters, digits, "_" or "-" (at most 64)'
        : seen.has(name)
          ? 'the remote lists that name twice'
          : tool.execution?.taskSupport === 'required'
            ? 'it runs only as a task, which Ahma does not forward'
            : undefined;
      seen.add(name);
      if (problem === undefined) return true;
      this.#options.logger.warn(
        { server: this.config.name, tool: String(tool.name).slice(0, 100) },
        `remote tool not offered: ${problem}`,
      );
      return false;
    });
  }

  #entry(remote: Tool): ToolEntry {
    const { name } = this.config;
    // Not passed on: the remote's output schema. A schema can be built to stall a validator (a
    // backtracking pattern) and every client validates results against it; the results still
    // carry their structuredContent.
    const described: Tool = { ...remote };
    delete described.outputSchema;
    const tool: Tool = {
      ...described,
      name: `${name}_${remote.name}`,
      ...(remote.title === undefined ? {} : { title: `${name}: ${remote.title}` }),
      description: `${remote.description ?? remote.name}\n\n(Tool "${remote.name}" of the remote MCP server "${name}", ${this.#shownUrl}.)`,
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
  /** The server's URL without query or credentials (an API key in it is not for the model). */
  get #shownUrl(): string {
    const { url } = this.config;
    return `${url.origin}${url.pathname}`;
  }

  #placeholder(): ToolEntry {
    const { name } = this.config;
    const url = this.#shownUrl;
    return {
      tool: {
        name: `${name}_connect`,
        description: `The remote MCP server "${name}" (${url}) is not connected yet, so its tools are not listed. Call this to learn why and what to do (for example a login URL to open); its tools appear once it is connected.`,
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
      // The remote's own JSON-RPC error, or this call's timeout, is this call's; anything else
      // (the connection closed, the network failed) loses the connection: the next call connects.
      const callsOwn =
        error instanceof McpError && error.code !== (ErrorCode.ConnectionClosed as number);
      if (!call.signal.aborted && !callsOwn) {
        this.#lost(status.connection, describe(error));
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
    const { name } = this.config;
    const url = this.#shownUrl;
    const status = this.#status;
    switch (status.kind) {
      case 'login':
        return toolError(
          `The remote MCP server "${name}" (${url}) needs a login. Ask the user to open this URL in a browser on this machine, then call the tool again:\n${status.url.href}`,
        );
      case 'failed':
        return toolError(
          `The remote MCP server "${name}" (${url}) is not connected: ${status.reason}. The next call tries again.`,
        );
      default:
        return toolError(
          `The remote MCP server "${name}" (${url}) is still connecting; try again shortly.`,
        );
    }
  }
}

function answer(result: CallToolResult): ToolOutcome {
  return { kind: 'answer', result };
}

function describe(error: unknown): string {
  return oneLine(messageOf(error));
}
