// How an isolated session learns its scope from its client (R8D.7, R8D.9): `roots/list`, asked once
// the client is initialized, and asked again while unanswered when a later message of the client
// arrives, because over Streamable HTTP a request the server starts on its own travels on the
// client's GET stream, which an SDK client opens only after its `notifications/initialized` was
// answered; a request that arrives is a POST whose own stream carries the question
// (`relatedRequestId`). The wait is bounded: without an answer in time the server's default scope
// is used. The first answer settles it; later ones are ignored.
//
// - a root → its directory (isolation/root-scope.ts), or `invalid` when it is no usable directory
//   (no uri, not a file:// URI, missing, not a directory, the filesystem root) or one the server's
//   policy refuses (outside the allowed roots, a pseudo file system, the temp directory, $HOME);
// - no roots, an error, or a malformed answer → the default scope.
import type {
  JSONRPCErrorResponse,
  JSONRPCRequest,
  JSONRPCResultResponse,
  RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { scopeOfRoot, type RootPolicy } from './root-scope.js';

export type RootsOutcome =
  | { readonly kind: 'root'; readonly scope: string; readonly uri: string }
  | { readonly kind: 'default'; readonly why: string }
  | { readonly kind: 'invalid'; readonly message: string };

export interface RootsProbeOptions {
  /** Sends a request to the client; `relatedRequestId` puts it on that request's stream. */
  readonly send: (request: JSONRPCRequest, relatedRequestId?: RequestId) => void;
  /** The ids of the questions start with this (unique to the session). */
  readonly idPrefix: string;
  readonly timeoutMs: number;
  /** What a root is checked against (allowed roots, forbidden directories, private state). */
  readonly policy: RootPolicy;
  /** Called once, with the first answer, or when the wait ends. */
  readonly onSettled: (outcome: RootsOutcome) => void;
}

/** More questions than this would only repeat one that cannot reach the client. */
const MAX_ASKS = 8;

export class RootsProbe {
  readonly #options: RootsProbeOptions;
  #asks = 0;
  #settled = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: RootsProbeOptions) {
    this.#options = options;
  }

  get settled(): boolean {
    return this.#settled;
  }

  /** Starts the bounded wait: when it ends unsettled, `why` is the reason the default is used. */
  startTimer(why: string): void {
    if (this.#settled || this.#timer !== undefined) return;
    this.#timer = setTimeout(() => this.#settle({ kind: 'default', why }), this.#options.timeoutMs);
  }

  /** Asks (again) for the roots, on `relatedRequestId`'s stream when given. */
  ask(relatedRequestId?: RequestId): void {
    if (this.#settled || this.#asks >= MAX_ASKS) return;
    this.#asks += 1;
    const id = `${this.#options.idPrefix}${String(this.#asks)}`;
    this.#options.send({ jsonrpc: '2.0', id, method: 'roots/list' }, relatedRequestId);
  }

  /** True for the id of one of this probe's questions (answered or not). */
  owns(id: RequestId): boolean {
    return typeof id === 'string' && id.startsWith(this.#options.idPrefix);
  }

  /**
   * The client is initialized: its roots are asked for, or, when its initialize did not declare
   * the roots capability, the default scope is settled at once (R8D.9).
   */
  seek(rootsDeclared: boolean): void {
    if (rootsDeclared) this.ask();
    else this.settleDefault('the client did not declare the roots capability');
  }

  /** Settles without asking: the client has no roots, or the session ends. */
  settleDefault(why: string): void {
    this.#settle({ kind: 'default', why });
  }

  /** Stops waiting, without settling (the session ended). */
  cancel(): void {
    this.#settled = true;
    clearTimeout(this.#timer);
  }

  /** The client's answer to one of the questions. */
  answer(message: JSONRPCResultResponse | JSONRPCErrorResponse): void {
    if (this.#settled) return;
    if ('error' in message) {
      this.#settle({
        kind: 'default',
        why: `the client answered roots/list with an error: ${message.error.message}`,
      });
      return;
    }
    // Read by hand, not with the SDK's schema: it refuses a root that is not file:// as a malformed
    // answer, which would give such a client the default scope instead of a refusal.
    const roots = (message.result as { roots?: unknown }).roots;
    if (!Array.isArray(roots)) {
      this.#settle({
        kind: 'default',
        why: 'the client answered roots/list with no list of roots',
      });
      return;
    }
    const first: unknown = roots[0];
    if (first === undefined) {
      this.#settle({ kind: 'default', why: 'the client has no roots' });
      return;
    }
    const uri = (first as { uri?: unknown } | null)?.uri;
    if (typeof uri !== 'string') {
      this.#settle({ kind: 'invalid', message: "the client's first root has no uri" });
      return;
    }
    // Settled now, decided once the directory is checked: a later answer cannot overtake it.
    this.#settled = true;
    clearTimeout(this.#timer);
    void scopeOfRoot(uri, this.#options.policy).then(
      (scope) => this.#options.onSettled({ kind: 'root', scope, uri }),
      (error: unknown) =>
        this.#options.onSettled({
          kind: 'invalid',
          message: error instanceof Error ? error.message : String(error),
        }),
    );
  }

  #settle(outcome: RootsOutcome): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    this.#options.onSettled(outcome);
  }
}
