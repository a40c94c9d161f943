// macOS (R7.3): a Seatbelt profile for sandbox-exec. Deny by default, reads allowed, writes only in
// the writable roots, temp folders and terminal devices. Paths are never spliced into the profile
// text: they are passed as -D parameters and referenced with (param "…").

/** The sandbox-exec binary on every macOS. */
export const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

/** The profile text for `count` writable roots, named WRITABLE_0 … WRITABLE_{count-1}. */
export function seatbeltProfile(count: number): string {
  const writable = Array.from(
    { length: count },
    (_, index) => `(allow file-write* (subpath (param "WRITABLE_${String(index)}")))`,
  );
  return [
    '(version 1)',
    '(deny default)',
    '(allow process-exec)',
    '(allow process-fork)',
    '(allow signal (target same-sandbox))',
    '(allow sysctl-read)',
    '(allow file-read*)',
    ...writable,
    '(allow file-write* (subpath "/private/tmp"))',
    '(allow file-write* (subpath "/private/var/folders"))',
    '(allow file-write* (literal "/dev/null"))',
    '(allow file-write* (literal "/dev/zero"))',
    '(allow file-write* (literal "/dev/dtracehelper"))',
    '(allow file-write* (regex #"^/dev/ttys[0-9]+$"))',
    '(allow file-ioctl (regex #"^/dev/ttys[0-9]+$"))',
    '(allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo"))',
    '(allow mach-lookup (global-name "com.apple.system.logger"))',
    '(allow mach-lookup (global-name "com.apple.trustd.agent"))',
    '(allow mach-lookup (global-name "com.apple.SecurityServer"))',
    '(allow network*)',
    '(allow ipc-posix-shm)',
    '',
  ].join('\n');
}

/**
 * The argv that runs `argv` under Seatbelt with `writable` roots (real paths). stderr is merged into
 * stdout by `sh -c 'exec "$@" 2>&1'`, which passes the command's words through "$@" untouched.
 */
export function seatbeltArgv(writable: readonly string[], argv: readonly string[]): string[] {
  const parameters = writable.flatMap((path, index) => ['-D', `WRITABLE_${String(index)}=${path}`]);
  return [
    SANDBOX_EXEC,
    '-p',
    seatbeltProfile(writable.length),
    ...parameters,
    '/bin/sh',
    '-c',
    'exec "$@" 2>&1',
    'sh',
    ...argv,
  ];
}
