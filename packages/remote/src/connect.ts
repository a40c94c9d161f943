// Connecting an MCP client to a remote Streamable HTTP server, logging in when it asks (R14): the
// first attempt sends the stored token (the SDK refreshes it on a 401); when the server still
// refuses, the SDK has started a login (AhmaOAuthProvider.redirectToAuthorization: the callback
// server listens, the user is told the URL), the code that comes back is exchanged, and a new
// transport connects with the new tokens. Every request then carries `Authorization: Bearer`.
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { AhmaOAuthProvider, type ProviderOptions } from './oauth-provider.js';

export type HttpConnectOptions = Omit<ProviderOptions, 'server'> & {
  readonly url: URL;
  /** Bounds the connection attempts (not the user's time to authorize). */
  readonly request?: RequestOptions;
};

export interface HttpConnection {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
  readonly provider: AhmaOAuthProvider;
  /** Whether a login through the browser was needed. */
  readonly loggedIn: boolean;
}

/**
 * Connects a client made by `makeClient` (a new one per attempt: a client whose first connect
 * failed is not reused) to `options.url`.
 */
export async function connectHttp(
  makeClient: () => Client,
  options: HttpConnectOptions,
): Promise<HttpConnection> {
  const provider = new AhmaOAuthProvider({ ...options, server: options.url });
  const attempt = async () => {
    const client = makeClient();
    const transport = new StreamableHTTPClientTransport(options.url, { authProvider: provider });
    try {
      await client.connect(transport, options.request);
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
    return { client, transport };
  };
  try {
    // An access token known to have expired is refreshed first (the SDK would only after a 401);
    // a refused refresh starts a login, which the attempt below then waits for.
    if (await provider.tokensExpired()) {
      await auth(provider, { serverUrl: options.url }).catch(() => undefined);
    }
    try {
      if (provider.authorizing) throw new UnauthorizedError('the refresh was refused');
      return { ...(await attempt()), provider, loggedIn: false };
    } catch (error) {
      if (!(error instanceof UnauthorizedError) || !provider.authorizing) throw error;
    }
    const code = await provider.authorizationCode();
    // The exchange needs a transport that knows the server; a throwaway one does it.
    await new StreamableHTTPClientTransport(options.url, { authProvider: provider }).finishAuth(
      code,
    );
    return { ...(await attempt()), provider, loggedIn: true };
  } finally {
    await provider.close();
  }
}
