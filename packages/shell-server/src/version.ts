// Who this server is, as it tells MCP clients and `--version`.
import packageJson from '../package.json' with { type: 'json' };

export const SERVER_NAME = 'ahma';
export const SERVER_VERSION: string = packageJson.version;
