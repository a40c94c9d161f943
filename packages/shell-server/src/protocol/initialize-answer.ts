// The answer this process's server gives an initialize, from a connection made for that request
// alone and closed once it is answered. An isolated session answers its client's initialize with
// it (isolation/isolated-session.ts): the session's process runs this binary with the server's own
// flags (isolation/child-command.ts), so it would answer the same, and none need start before the
// client's roots have said where it runs.
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Runtime } from '../runtime/runtime.js';
import { classify, type ResponseMessage } from '../jsonrpc/message-kind.js';
import { keyOf } from '../jsonrpc/request-key.js';
import { createMcpServer } from './server.js';

export async function initializeAnswer(
  runtime: Runtime,
  request: JSONRPCRequest,
): Promise<ResponseMessage> {
  const [ours, theirs] = InMemoryTransport.createLinkedPair();
  const connection = createMcpServer(runtime);
  try {
    await connection.server.connect(theirs);
    const answer = new Promise<ResponseMessage>((resolve) => {
      ours.onmessage = (message) => {
        const kind = classify(message);
        if (kind?.kind === 'response' && keyOf(kind.message.id) === keyOf(request.id)) {
          resolve(kind.message);
        }
      };
    });
    await ours.start();
    await ours.send(request);
    return await answer;
  } finally {
    await connection.close();
    await ours.close();
  }
}
