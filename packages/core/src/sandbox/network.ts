// R7.15, R7.16: what commands may reach on the network, one word shared by the sandbox and its
// profiles.

/**
 * `host`: any address; `proxy` (R7.16): TCP connects to one loopback port only, the server's egress
 * proxy, which decides per host (no other socket but unix ones, no bind, no listen); `none`: no
 * socket but unix ones, no TCP at all.
 */
export type NetworkMode = 'host' | 'proxy' | 'none';

/** From the narrowest to the widest. */
const WIDTH: readonly NetworkMode[] = ['none', 'proxy', 'host'];

/**
 * The narrower of the server's mode and one a command asks for (none < proxy < host): a command
 * may narrow what it reaches, never widen it.
 */
export function narrowest(server: NetworkMode, requested?: NetworkMode): NetworkMode {
  if (requested === undefined) return server;
  return WIDTH.indexOf(requested) < WIDTH.indexOf(server) ? requested : server;
}
