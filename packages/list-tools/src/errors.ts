// Failures of a listing, each with a stable code and a message that names the server and the cause.

/** Why a server could not be listed; stable, for scripts and tests. */
export type ListToolsErrorCode =
  | 'SPAWN_FAILED'
  | 'SERVER_EXITED'
  | 'UNREACHABLE'
  | 'UNAUTHORIZED'
  | 'HTTP_ERROR'
  | 'TIMEOUT'
  | 'PROTOCOL_ERROR';

/** A server that could not be started, reached or listed (exit status 1). */
export class ListToolsError extends Error {
  override readonly name = 'ListToolsError';

  constructor(
    readonly code: ListToolsErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

// Node's network error codes, in words a user can act on.
const NETWORK_CAUSES: Record<string, string> = {
  ECONNREFUSED: 'connection refused (is the server running, and on that port?)',
  ECONNRESET: 'the connection was reset by the server',
  ENOTFOUND: 'host not found (check the host name)',
  EAI_AGAIN: 'host name lookup failed (check the host name and the network)',
  ETIMEDOUT: 'the connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  CERT_HAS_EXPIRED: "the server's TLS certificate has expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "the server's TLS certificate is self-signed",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "the server's TLS certificate cannot be verified",
  ERR_TLS_CERT_ALTNAME_INVALID: "the server's TLS certificate is not valid for this host name",
};

/** The network-level reason inside a fetch failure ("fetch failed" says nothing), if there is one. */
export function networkCause(error: unknown): string | undefined {
  for (let current = error, depth = 0; current !== undefined && depth < 5; depth++) {
    const code = errorCode(current);
    if (code !== undefined && code in NETWORK_CAUSES) {
      const detail = current instanceof Error ? current.message : '';
      return `${NETWORK_CAUSES[code]}${detail === '' ? '' : ` [${detail}]`}`;
    }
    if (current instanceof AggregateError && current.errors.length > 0) {
      current = current.errors[0];
    } else {
      current = current instanceof Error ? current.cause : undefined;
    }
  }
  return undefined;
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

/** Zod's issues when the server's reply does not follow the MCP schema, as `path: message` lines. */
export function schemaIssues(error: unknown): string[] | undefined {
  if (typeof error !== 'object' || error === null || !('issues' in error)) return undefined;
  if (!Array.isArray(error.issues)) return undefined;
  return error.issues.slice(0, 5).map((issue: unknown) => {
    const { path, message } = issue as { path?: unknown; message?: unknown };
    const where = Array.isArray(path) && path.length > 0 ? `${path.join('.')}: ` : '';
    return `${where}${String(message)}`;
  });
}
