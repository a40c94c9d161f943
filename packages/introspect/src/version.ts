// This package's version, as a cache of what it read keys on it (ahma-shell --introspect): a new
// version may read the same help differently, so what an older one wrote is not reused.
import packageJson from '../package.json' with { type: 'json' };

export const INTROSPECT_VERSION: string = packageJson.version;
