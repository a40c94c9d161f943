// A request id as a map key: JSON-RPC ids are strings or numbers, and 1 and "1" are different ids,
// so the key keeps the type. Shared by everything that tracks requests by id.
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';

/** The map key of a request id. */
export const keyOf = (id: RequestId): string => `${typeof id}:${String(id)}`;
