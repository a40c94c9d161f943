// How the server says no, on every layer, in one shape: what is refused, the message the person or
// the client reads (it names the cause and, where there is one, the fix), and what each way of
// answering needs: Ahma's stable error code (docs/requirements.md), the JSON-RPC error code, the
// HTTP status and headers. What is refused decides how it is answered:
// - a tool call ('call') is answered as a tool error (`isError`, `[CODE] message`), never as a
//   protocol error: the model reads it and can act on it (SPEC §2);
// - a request ('request') or a new session ('session') is answered as a JSON-RPC error with
//   `rpcCode` (RpcCode.Refused when none is given), over HTTP with `status` and `headers`;
// - the server's start ('start') is one line on stderr and a non-zero exit (a stdio server also
//   answers its client's requests with it: transports/stdio/start-refusal.ts).
// A refusal is returned, not thrown, where its caller answers it; where it must cross code that
// does not know it (a start refused deep inside listen), it travels as a RefusalError.
import { AhmaError, type AhmaErrorCode } from '@ahma/core';

export type Refused = 'call' | 'request' | 'session' | 'start';

export interface Refusal {
  readonly kind: 'refused';
  readonly what: Refused;
  readonly message: string;
  /** Ahma's stable code (a tool call's, a start's); absent where none applies. */
  readonly code?: AhmaErrorCode | undefined;
  /** Which rule refused it, short and stable, for the log (a session limit: 'max-sessions'). */
  readonly rule?: string;
  /** The JSON-RPC error code it is answered with (jsonrpc/codes.ts). */
  readonly rpcCode?: number;
  /** HTTP: the status it is answered with, and headers the client needs (Retry-After, …). */
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A refusal answered over HTTP: it has its status. */
export type HttpRefusal = Refusal & { readonly status: number };

export type RefusalDetails = Omit<Refusal, 'kind' | 'what' | 'message'>;

/** A refusal whose type keeps the details given (a status given is a status the type knows). */
export function refusal<const D extends RefusalDetails = Record<never, never>>(
  what: Refused,
  message: string,
  details?: D,
): Refusal & D {
  return Object.assign({ kind: 'refused' as const, what, message }, details);
}

/** A refused tool call: nothing ran. */
export function refused(message: string, code?: AhmaErrorCode): Refusal {
  return refusal('call', message, { code });
}

export const isRefusal = (value: unknown): value is Refusal =>
  typeof value === 'object' && value !== null && 'kind' in value && value.kind === 'refused';

/** Turns an expected refusal (a path outside the scope, …) into a refused call. */
export async function refusing<T>(work: () => Promise<T> | T): Promise<T | Refusal> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AhmaError) return refused(error.message, error.code);
    throw error;
  }
}

/**
 * A refusal thrown: its message is the refusal's, so whoever prints it prints one line, without a
 * stack. It has no `code` of its own, unlike the errno errors of a listen it is told apart from.
 */
export class RefusalError extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.message);
    this.name = 'RefusalError';
  }
}
