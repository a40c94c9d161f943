// R7.15: what commands may reach on the network, one word shared by the sandbox and its profiles.

/** `host`: any address; `none`: no socket but unix ones, no TCP at all. */
export type NetworkMode = 'host' | 'none';
