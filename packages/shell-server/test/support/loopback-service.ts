// A loopback HTTP service for the network tests (R7.16–R7.18): started before the file's tests on
// an ephemeral port of 127.0.0.1, answering every request with `hello from the service`, closed
// after them.
import { createServer } from 'node:http';
import { afterAll, beforeAll } from 'vitest';

export const SERVICE_BODY = 'hello from the service\n';

/** File-level hooks; `port()` is the service's port once the file's tests run. */
export function loopbackService(): { port: () => number } {
  const service = createServer((_, response) => response.end(SERVICE_BODY));
  let port = 0;
  beforeAll(async () => {
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    const address = service.address();
    port = typeof address === 'object' && address !== null ? address.port : 0;
  });
  afterAll(async () => {
    service.closeAllConnections();
    await new Promise<void>((resolve) => service.close(() => resolve()));
  });
  return { port: () => port };
}
