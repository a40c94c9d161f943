// Cancelling a 2026-07-28 request over HTTP (SPEC §3, §12). The era's signal is the client closing
// the request's stream (the handler takes the Request's signal as the cancellation); but a client
// may instead POST notifications/cancelled naming the request: the SDK v2 client did before it
// learnt per-request streams, and a transport without them still does. In this sessionless era that
// POST reaches a server of its own, which knows no request of that id: the command would run on.
// So the endpoint keeps its requests in flight under who sent them (the peer, the envelope's
// clientInfo) and their id, and such a notification aborts the one it names. A name that matches
// two requests in flight (two copies of one client on one host) cancels neither: a client's
// cancellation must never kill another client's command.

export interface TrackedRequest {
  /** Aborted when a notifications/cancelled names this request. */
  readonly signal: AbortSignal;
  /** The exchange is over: a later cancellation of its id names nothing. */
  release(): void;
}

const CLIENT_INFO_KEY = 'io.modelcontextprotocol/clientInfo';

export class InFlightRequests {
  readonly #byKey = new Map<string, Set<AbortController>>();

  /** Tracks `body` from `peer` when it is a request; undefined for anything else. */
  track(peer: string, body: unknown): TrackedRequest | undefined {
    const message = body as { id?: unknown; method?: unknown } | null;
    if (typeof message?.method !== 'string') return undefined;
    const key = keyOf(peer, body, message.id);
    if (key === undefined) return undefined;
    const controller = new AbortController();
    let entries = this.#byKey.get(key);
    if (entries === undefined) this.#byKey.set(key, (entries = new Set()));
    entries.add(controller);
    return {
      signal: controller.signal,
      release: () => {
        entries.delete(controller);
        if (entries.size === 0 && this.#byKey.get(key) === entries) this.#byKey.delete(key);
      },
    };
  }

  /**
   * Aborts the request a notifications/cancelled `body` from `peer` names. Returns what happened:
   * `cancelled`, `unknown` (no such request in flight: finished, or a task by now) or `ambiguous`.
   */
  cancel(peer: string, body: unknown): 'cancelled' | 'unknown' | 'ambiguous' {
    const params = (body as { params?: { requestId?: unknown } } | null)?.params;
    const key = keyOf(peer, body, params?.requestId);
    const entries = key === undefined ? undefined : this.#byKey.get(key);
    if (entries === undefined || entries.size === 0) return 'unknown';
    if (entries.size > 1) return 'ambiguous';
    for (const controller of entries) controller.abort(new Error('notifications/cancelled'));
    return 'cancelled';
  }
}

/**
 * The key of request `id` from `peer`: the client's name and version from the message's envelope
 * (every 2026-07-28 message carries it, the notification as well as the request), with the id's
 * type (1 and "1" are different requests).
 */
function keyOf(peer: string, body: unknown, id: unknown): string | undefined {
  if (typeof id !== 'string' && typeof id !== 'number') return undefined;
  const meta = (body as { params?: { _meta?: Record<string, unknown> } } | null)?.params?._meta;
  const info = meta?.[CLIENT_INFO_KEY] as { name?: unknown; version?: unknown } | undefined;
  return JSON.stringify([peer, info?.name ?? null, info?.version ?? null, typeof id, id]);
}

/** `response` whose end (written whole, failed, or cancelled by the client leaving) calls `ended`. */
export function onBodyEnd(response: Response, ended: () => void): Response {
  const { body } = response;
  if (body === null) {
    ended();
    return response;
  }
  const reader = body.getReader();
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    ended();
  };
  const watched = new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      try {
        const chunk = await reader.read();
        if (chunk.done) {
          finish();
          controller.close();
          return;
        }
        controller.enqueue(chunk.value);
      } catch (error) {
        finish();
        controller.error(error);
      }
    },
    cancel: async (reason) => {
      finish();
      await reader.cancel(reason).catch(() => undefined);
    },
  });
  return new Response(watched, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
