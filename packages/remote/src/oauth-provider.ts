// The MCP SDK's OAuthClientProvider for Ahma (R14): the SDK does the OAuth 2.1 work — discovery of
// the protected-resource and authorization-server metadata, dynamic client registration, PKCE,
// the code exchange, refresh on a 401 — and asks this object for what it keeps: the client, the
// tokens (in the token file), the PKCE verifier and `state` (in memory, for one login), and where
// the user goes to authorize (the localhost callback server is listening before they are told).
import { randomBytes } from 'node:crypto';
import type {
  OAuthClientProvider,
  OAuthDiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { CALLBACK_PATH, CallbackListener } from './callback.js';
import type { TokenStore } from './token-store.js';

/** An access token this close to its expiry is refreshed before it is used. */
const EXPIRY_MARGIN_MS = 60_000;

export interface ProviderOptions {
  readonly server: URL;
  readonly store: TokenStore;
  /** The localhost port of the redirect URI (R14.5); it must be free when a login starts. */
  readonly callbackPort: number;
  /** A client registered beforehand (else one is registered dynamically, when the server allows). */
  readonly clientId?: string | undefined;
  readonly clientSecret?: string | undefined;
  /** How long a login waits for the user. */
  readonly authorizationTimeoutMs: number;
  /** The callback server, shared by the logins of one process (default: one of its own). */
  readonly callbacks?: CallbackListener | undefined;
  /** Tells the user where to authorize (the callback server is already listening). */
  readonly onAuthorizationUrl: (url: URL) => void | Promise<void>;
}

export class AhmaOAuthProvider implements OAuthClientProvider {
  readonly #options: ProviderOptions;
  #state: string | undefined;
  #verifier: string | undefined;
  #discovery: OAuthDiscoveryState | undefined;
  readonly #callbacks: CallbackListener;
  #code: Promise<string> | undefined;
  /** The refresh token of the tokens last given to the SDK (what a refused refresh refers to). */
  #handedOut: string | undefined;

  constructor(options: ProviderOptions) {
    this.#options = options;
    this.#callbacks = options.callbacks ?? new CallbackListener(options.callbackPort);
  }

  /** On the loopback address itself (RFC 8252 §7.3): `localhost` might resolve to ::1 first. */
  get redirectUrl(): string {
    return `http://127.0.0.1:${String(this.#options.callbackPort)}${CALLBACK_PATH}`;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Ahma',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method:
        this.#options.clientSecret === undefined ? 'none' : 'client_secret_post',
    };
  }

  state(): string {
    this.#state = randomBytes(24).toString('base64url');
    return this.#state;
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const { clientId, clientSecret } = this.#options;
    if (clientId !== undefined) {
      return {
        client_id: clientId,
        ...(clientSecret === undefined ? {} : { client_secret: clientSecret }),
      };
    }
    const { client } = await this.#options.store.get(this.#options.server);
    // A client registered for another callback port would be refused the redirect: register anew.
    const uris = (client as { redirect_uris?: unknown } | undefined)?.redirect_uris;
    if (Array.isArray(uris) && !uris.includes(this.redirectUrl)) return undefined;
    return client;
  }

  async saveClientInformation(client: OAuthClientInformationMixed): Promise<void> {
    if (this.#options.clientId !== undefined) return; // configured, not ours to keep
    await this.#options.store.update(this.#options.server, (kept) => ({ ...kept, client }));
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    const { tokens } = await this.#options.store.get(this.#options.server);
    this.#handedOut = tokens?.refresh_token;
    return tokens;
  }

  /**
   * Whether the stored access token has expired (or does within a minute), by its `expires_in`
   * and when it was saved; false when that is unknown.
   */
  async tokensExpired(): Promise<boolean> {
    const { tokens, savedAt } = await this.#options.store.get(this.#options.server);
    if (tokens?.refresh_token === undefined || tokens.expires_in === undefined) return false;
    if (savedAt === undefined) return false;
    return savedAt + tokens.expires_in * 1000 <= Date.now() + EXPIRY_MARGIN_MS;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    await this.#options.store.update(this.#options.server, (kept) => ({
      ...kept,
      tokens,
      savedAt: Date.now(),
    }));
  }

  /** Listens for the callback, then tells the user; the login is awaited with authorizationCode(). */
  async redirectToAuthorization(url: URL): Promise<void> {
    const state = url.searchParams.get('state') ?? this.#state;
    if (state === undefined) throw new Error('the authorization URL carries no state');
    await this.#callbacks.listen();
    this.#code = this.#callbacks.code(state, this.#options.authorizationTimeoutMs);
    this.#code.catch(() => undefined); // awaited by authorizationCode(); never unhandled
    await this.#options.onAuthorizationUrl(url);
  }

  /** Whether a login was started (redirectToAuthorization) and not yet completed. */
  get authorizing(): boolean {
    return this.#code !== undefined;
  }

  /** The code of the login in progress (the callback server stops when no login waits). */
  async authorizationCode(): Promise<string> {
    const pending = this.#code;
    if (pending === undefined) throw new Error('no authorization was started');
    try {
      return await pending;
    } finally {
      this.#code = undefined;
    }
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    if (this.#verifier === undefined) throw new Error('no PKCE code verifier was saved');
    return this.#verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.#discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#discovery;
  }

  /** What the SDK found no longer valid (a refresh refused, a client unknown): forgotten. */
  async invalidateCredentials(
    scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery',
  ): Promise<void> {
    if (scope === 'all' || scope === 'verifier') this.#verifier = undefined;
    if (scope === 'all' || scope === 'discovery') this.#discovery = undefined;
    if (scope === 'verifier' || scope === 'discovery') return;
    await this.#options.store.update(this.#options.server, (kept) => {
      // Tokens another process saved meanwhile (a refresh there rotated the refresh token this one
      // tried) are newer than what failed here: they stay.
      const stale =
        scope === 'all' || (scope === 'tokens' && kept.tokens?.refresh_token === this.#handedOut);
      return {
        ...kept,
        ...(stale ? { tokens: undefined, savedAt: undefined } : {}),
        ...(scope === 'all' || scope === 'client' ? { client: undefined } : {}),
      };
    });
  }

  /** Stops listening for this provider's own callbacks (a shared listener is its owner's). */
  async close(): Promise<void> {
    if (this.#options.callbacks === undefined) await this.#callbacks.close();
  }
}
