// The 2026-07-28 endpoint (modern-endpoint.ts), loaded with the SDK v2 on the first request that
// may be of that era: one without a session that is no initialize. Every request of a 2025 client
// carries its session or opens one, so a server that only ever serves them never loads the SDK v2
// (650 kB, about a tenth of a start's CPU).
import type { Runtime } from '../../runtime/runtime.js';
import type { ModernEndpoint, ModernEndpointOptions } from './modern-endpoint.js';

export function modernEndpointOnDemand(
  runtime: Runtime,
  options: ModernEndpointOptions,
): ModernEndpoint {
  let loaded: Promise<ModernEndpoint> | undefined;
  const endpoint = () =>
    (loaded ??= import('./modern-endpoint.js').then(({ createModernEndpoint }) =>
      createModernEndpoint(runtime, options),
    ));
  return {
    claims: async (request, body) => (await endpoint()).claims(request, body),
    handle: async (request, body, peer) => (await endpoint()).handle(request, body, peer),
    close: async () => {
      if (loaded !== undefined) await (await loaded).close();
    },
  };
}
