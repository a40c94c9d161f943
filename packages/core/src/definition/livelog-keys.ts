// R7.9: the environment variables tool files name as a livelog API key (`"api_key": "${NAME}"`),
// so that the server can keep them from every command. Read from the files themselves, before the
// loader (whose availability probes run commands) sees them, and generously: an `api_key` member
// anywhere in a file that parses as JSON counts, valid definition or not, so every key the loader
// could accept is among them. A missing directory or an unreadable file names nothing.
import { API_KEY_REFERENCE } from './livelog-schema.js';
import { listJsonFiles, readText } from './tool-files.js';

/** The variables the `.json` files directly in `dirs` name as an API key, sorted. */
export async function livelogKeyVariables(dirs: readonly string[]): Promise<string[]> {
  const names = new Set<string>();
  for (const dir of dirs) {
    const files = await listJsonFiles(dir).catch(() => [] as string[]);
    for (const file of files) {
      // readText opens regular files only: the tools directory is in the scope commands write.
      const text = await readText(file).catch(() => '');
      try {
        // Like the loader, a byte-order mark is not content.
        collect(JSON.parse(text.replace(/^\uFEFF/, '')), names);
      } catch {
        // Not JSON: the loader rejects it too.
      }
    }
  }
  return [...names].sort();
}

function collect(value: unknown, names: Set<string>): void {
  if (typeof value !== 'object' || value === null) return;
  for (const [key, item] of Object.entries(value)) {
    const name =
      key === 'api_key' && typeof item === 'string' ? API_KEY_REFERENCE.exec(item) : null;
    if (name?.[1] !== undefined) names.add(name[1]);
    else collect(item, names);
  }
}
