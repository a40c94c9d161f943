// The command line of an isolated session's process (R8D.3): this package's own `ahma-shell
// --mode stdio`, run by the Node that runs the server, with the server's flags that shape what a
// session serves and how (tools, registry, sandbox, timeouts, output budget, pool, denied
// variables, logging). The session appends `--sandbox-scope <its scope>`; the HTTP flags and
// --session-isolation stay with the server. Relative paths are made absolute against the server's
// directory: the process starts in its scope.
import { resolve } from 'node:path';
import type { ServerOptions } from '../runtime/settings.js';
import { ahmaShellBin } from '../package.js';
import type { ChildCommand } from './child.js';

export function isolatedChildCommand(
  options: ServerOptions,
  cwd: string,
  bin: string = ahmaShellBin(),
  node: string = process.execPath,
): ChildCommand {
  const args = [bin, '--mode', 'stdio'];
  if (options.toolsDir !== undefined) args.push('--tools-dir', resolve(cwd, options.toolsDir));
  if (options.tools.length > 0) args.push('--tools', options.tools.join(','));
  if (options.noToolDiscovery) args.push('--no-tool-discovery');
  if (options.noSandbox) args.push('--no-sandbox');
  if (options.keepCapabilities) args.push('--keep-capabilities');
  if (options.network !== 'host') args.push('--network', options.network);
  if (options.allowHosts.length > 0) args.push('--allow-host', options.allowHosts.join(','));
  if (options.denyHosts.length > 0) args.push('--deny-host', options.denyHosts.join(','));
  if (options.stateDir !== undefined) args.push('--state-dir', resolve(cwd, options.stateDir));
  if (options.sync) args.push('--sync');
  args.push('--timeout', String(options.timeoutSeconds));
  args.push('--max-output-tokens', String(options.maxOutputTokens));
  args.push('--inline-wait', String(options.inlineWaitSeconds));
  if (options.noShellPool) args.push('--no-shell-pool');
  if (options.noHotReload) args.push('--no-hot-reload');
  if (options.claudeChannel) args.push('--claude-channel');
  if (options.registry) args.push('--registry');
  if (options.registryFile !== undefined) {
    args.push('--registry-file', resolve(cwd, options.registryFile));
  }
  // R7.9: the session's commands are denied what the server's are (the child adds Ahma's own
  // secrets and its livelog keys itself).
  if (options.envDeny.length > 0) args.push('--env-deny', options.envDeny.join(','));
  // R7.10, R7.14: the session's commands read and write what the server's may (the paths are
  // absolute or ~/, the same HOME).
  if (options.profiles.length > 0) args.push('--profile', options.profiles.join(','));
  if (options.allowRead.length > 0) args.push('--allow-read', options.allowRead.join(','));
  if (options.denyRead.length > 0) args.push('--deny-read', options.denyRead.join(','));
  if (options.allowWrite.length > 0) args.push('--allow-write', options.allowWrite.join(','));
  // R7.11: relative to each session's own scope, as to the server's.
  if (options.allowHandoffWrites.length > 0) {
    args.push('--allow-handoff-writes', options.allowHandoffWrites.join(','));
  }
  if (options.logToStderr) args.push('--log-to-stderr');
  if (options.debug) args.push('--debug');
  return { file: node, args };
}
