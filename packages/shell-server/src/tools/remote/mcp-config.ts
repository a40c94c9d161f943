// The remote MCP servers whose tools Ahma offers (SPEC §10, R14.1): `--mcp-config FILE`, by default
// `<scope>/.ahma/mcp.json` when it exists. Its `servers` entries of `"type": "http"` are proxied
// (`url`, optional `client_id`/`client_secret`, upstream's `atlassian_client_id`/
// `atlassian_client_secret` taken as those); other types are listed as skipped, with the reason.
import { readFile } from 'node:fs/promises';

export interface RemoteServerConfig {
  /** The entry's name: its tools are offered as `<name>_<tool>`. */
  readonly name: string;
  readonly url: URL;
  readonly clientId?: string | undefined;
  readonly clientSecret?: string | undefined;
}

export interface McpConfig {
  readonly file: string;
  readonly servers: readonly RemoteServerConfig[];
  /** Entries not proxied, and why. */
  readonly skipped: readonly { readonly name: string; readonly reason: string }[];
}

export class McpConfigError extends Error {
  override readonly name = 'McpConfigError';
}

/** A server name that makes tool names clients accept (`<name>_<tool>`). */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$/;

/** Reads `file`; undefined when it does not exist and was not asked for by name. */
export async function readMcpConfig(
  file: string,
  required: boolean,
): Promise<McpConfig | undefined> {
  let text;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !required) return undefined;
    throw new McpConfigError(`cannot read the MCP config ${file}: ${String(error)}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new McpConfigError(`${file} is not JSON: ${String(error)}`);
  }
  const servers = (parsed as { servers?: unknown } | null)?.servers;
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) {
    throw new McpConfigError(`${file} has no "servers" object ({"servers": {"name": {...}}})`);
  }
  const config: { servers: RemoteServerConfig[]; skipped: { name: string; reason: string }[] } = {
    servers: [],
    skipped: [],
  };
  for (const [name, entry] of Object.entries(servers as Record<string, unknown>)) {
    const problem = (reason: string) => config.skipped.push({ name, reason });
    if (typeof entry !== 'object' || entry === null) {
      problem('not an object');
      continue;
    }
    const fields = entry as Record<string, unknown>;
    if (fields['type'] !== 'http') {
      problem(
        `type ${JSON.stringify(fields['type'] ?? 'stdio')} is not proxied; only "http" servers are`,
      );
      continue;
    }
    if (!NAME.test(name)) {
      problem(
        'the name must be letters, digits, "_" or "-" (at most 48), starting with a letter or digit',
      );
      continue;
    }
    const url = httpUrl(fields['url']);
    if (url === undefined) {
      problem(`"url" must be an absolute http(s) URL, not ${JSON.stringify(fields['url'])}`);
      continue;
    }
    const text = (key: string) =>
      typeof fields[key] === 'string' ? (fields[key] as string) : undefined;
    config.servers.push({
      name,
      url,
      clientId: text('client_id') ?? text('atlassian_client_id'),
      clientSecret: text('client_secret') ?? text('atlassian_client_secret'),
    });
  }
  return { file, ...config };
}

function httpUrl(value: unknown): URL | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}
