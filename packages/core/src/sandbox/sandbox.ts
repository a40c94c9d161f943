// The sandbox every command runs in (R7): which mechanism, which paths are writable, and how a
// command line is wrapped. Created once per scope, after probing the mechanism; there is no silent
// fallback to running unconfined.
import { mkdir, mkdtemp, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { AhmaError } from '../errors.js';
import { isInside, overlaps } from '../paths/inside.js';
import { DEFAULT_TIMINGS } from '../process/timings.js';
import { errorCode, type LabelledPath } from '../state/paths.js';
import { handoffMounts, makeMissingHooksDirectories } from './handoff.js';
import type { NetworkMode } from './network.js';
import { defaultHelperPath, helperProblem, probeLandlock } from './helper-binary.js';
import {
  coverRules,
  deniedBy,
  expandHome,
  PRIVATE_STATE_LIST,
  shippedDenies,
  SYSTEM_READ,
  usableHome,
  type DenyEntry,
  type Grant,
  type ReadPolicy,
  type Rule,
} from './read-policy.js';
import {
  SANDBOX_EXEC,
  seatbeltArgv,
  seatbeltProfile,
  seatbeltReads,
  type SeatbeltProfile,
} from './seatbelt.js';

export type SandboxMechanism = 'landlock' | 'seatbelt' | 'none';

export interface SandboxOptions {
  /** The real path of the sandbox scope. */
  readonly scope: string;
  /** More directories commands may write to (caches such as a shared npm cache). */
  readonly extraWritable?: readonly string[];
  /** Let commands write to the temp directory (default true). */
  readonly writableTemp?: boolean;
  /** The temp directory commands may write (default: the process's, os.tmpdir()). */
  readonly tempDir?: string;
  /** Skip the seccomp filter that refuses unix-socket connections (Linux). */
  readonly allowUnixSockets?: boolean;
  /**
   * R7.15: `host` (default): commands reach any address; `none`: no socket of any family but unix
   * ones (seccomp), no TCP bind or connect (Landlock, ABI >= 4), no network on macOS. R7.16:
   * `proxy`: TCP connects to `proxyPort` alone (Landlock, ABI >= 4: refused below), no other
   * socket but unix ones, no bind or listen; on macOS outbound to localhost:proxyPort only.
   */
  readonly network?: NetworkMode;
  /** R7.16: the egress proxy's loopback port; required when `network` is `proxy`. */
  readonly proxyPort?: number | undefined;
  /** Let commands keep the server's capabilities (Linux; by default every set is emptied). */
  readonly keepCapabilities?: boolean;
  /** --no-sandbox: run unconfined (for trusted environments; the caller must warn loudly). */
  readonly disabled?: boolean;
  /** Where the per-server caches go (default: a fresh directory in the temp dir). */
  readonly cacheRoot?: string;
  /** The server's HOME: readable by commands but for the credential deny list (R7.10). */
  readonly home?: string | undefined;
  /** Ahma's private state (the state root): never readable by commands (R7.10). */
  readonly privateState?: string | undefined;
  /** More paths commands may read (--allow-read), even inside a denied one. */
  readonly extraReadable?: readonly string[];
  /** More paths commands may not read (--deny-read), beyond the shipped lists. */
  readonly denyRead?: readonly string[];
  /**
   * Time the helper gives a stopped process tree between SIGTERM and SIGKILL (Timings.graceMs:
   * the executor's backstop counts on the helper escalating first). Default DEFAULT_TIMINGS'.
   */
  readonly graceMs?: number;
  /**
   * R7.11: the trust hand-off files (policy/handoff.json) are protected where the helper can (a
   * mount namespace, Linux), else only watched; `allow`: --allow-handoff-writes paths (absolute),
   * left writable. false: neither. Default on, nothing allowed.
   */
  readonly handoff?: { readonly allow: readonly string[] } | false;
  readonly platform?: NodeJS.Platform;
  readonly helperPath?: string;
}

export interface Sandbox {
  readonly mechanism: SandboxMechanism;
  readonly scope: string;
  /** Every directory commands may write to (real paths). */
  readonly writable: readonly string[];
  /** The per-server directory the HOME caches are redirected into. */
  readonly cacheRoot: string;
  /** Landlock ABI, on Linux. */
  readonly abi: number | undefined;
  /** Things the operator should know (running as root, running unconfined). */
  readonly warnings: readonly string[];
  /** R7.15: the network mode in force (`host` when unconfined: nothing is enforced then). */
  readonly network: NetworkMode;
  /** R7.16: the one port commands may connect to when `network` is `proxy`, else undefined. */
  readonly proxyPort: number | undefined;
  /** What commands may read, write and not read (R7.10); enforced on Linux and macOS. */
  readonly policy: ReadPolicy;
  /** The policy as the helper's rules (real paths), computed once per sandbox. */
  readonly rules: readonly Rule[];
  /**
   * R7.11: how the hand-off files are kept: `mount` (read-only in the helper's mount namespace:
   * `protect`, with `pin` keeping the directories on the way in place; computed at creation),
   * `detect` (only watched: `reason` says why), `off` (handoff: false).
   */
  readonly handoff: SandboxHandoff;
  /**
   * R7.11: works out the hand-off mounts again (a hand-off path appeared, or one was replaced
   * outside, which a bind mount would keep showing as it was); the next helper or pool started
   * uses them. False when hand-off files are not mounted here (`detect`, `off`).
   */
  refreshHandoff(): boolean;
  /**
   * The program and arguments that run `argv` confined (and supervised, on Linux); `own`: this
   * command's own confinement — a network mode instead of the sandbox's, more writable paths (a
   * person's grant, R7.18) — ignored when unconfined. Throws CONFIG_INVALID for `proxy` without a
   * port, SANDBOX_UNAVAILABLE where it cannot be enforced.
   */
  wrap(argv: readonly string[], own?: OwnConfinement): CommandLine;
  /** The command line of the shell-pool zygote keeping `size` warm shells, where supported. */
  poolCommand(size: number): CommandLine | undefined;
  /**
   * `argv` confined to exactly `writable` (no scope, no temp dir): the engine empties directories
   * commands wrote (their caches) this way, so a link planted there can lead nowhere else.
   */
  confine(writable: readonly string[], argv: readonly string[]): CommandLine;
}

export interface SandboxHandoff {
  readonly mechanism: 'mount' | 'detect' | 'off';
  readonly reason?: string;
  readonly protect: readonly string[];
  readonly pin: readonly string[];
}

/**
 * One command's own confinement: a network mode (R7.15, R7.16; `proxyPort` is required with
 * `proxy`), and more paths it may write (real paths, R7.18).
 */
export interface OwnConfinement {
  readonly network?: NetworkMode | undefined;
  readonly proxyPort?: number | undefined;
  readonly writable?: readonly string[] | undefined;
  /** R15.4: a pseudo-terminal of this size for the command (Linux; the helper opens it). */
  readonly pty?: { readonly cols: number; readonly rows: number } | undefined;
  /**
   * Workspace lanes, `read_only`: nothing inside the scope may be written (it stays readable);
   * the temp directory, the caches and the other writable paths stay writable.
   */
  readonly readOnlyScope?: boolean | undefined;
}

export interface CommandLine {
  readonly file: string;
  readonly args: string[];
}

const FIX_LINUX = [
  'Ahma confines every command with Landlock and will not run commands unconfined.',
  'To fix: use Linux 5.13 or newer built with CONFIG_SECURITY_LANDLOCK=y; make sure "landlock" is in',
  "the kernel's lsm= boot parameter (check: cat /sys/kernel/security/lsm); in a container, allow the",
  'landlock_* syscalls in its seccomp profile. On Windows, run Ahma inside WSL2.',
  'In a trusted, disposable environment only, --no-sandbox runs commands unconfined.',
].join('\n');

const FIX_PROXY = [
  'To fix: run Ahma on Linux 6.7 or newer (Landlock ABI 4 confines TCP connects to one port), or',
  'choose --network none (no network for commands) or --network host (any address, nothing',
  'filtered).',
].join('\n');

type CheckedNetwork =
  | { readonly network: 'host' | 'none'; readonly proxyPort: undefined }
  | { readonly network: 'proxy'; readonly proxyPort: number };

/**
 * The mode and port a command runs with: `proxy` needs a TCP port (1..65535), CONFIG_INVALID
 * otherwise; the port is dropped for the other modes.
 */
function checkedNetwork(network: NetworkMode, proxyPort: number | undefined): CheckedNetwork {
  if (network !== 'proxy') return { network, proxyPort: undefined };
  if (
    proxyPort === undefined ||
    !Number.isInteger(proxyPort) ||
    proxyPort < 1 ||
    proxyPort > 65535
  ) {
    throw new AhmaError(
      'CONFIG_INVALID',
      `--network proxy needs the egress proxy's port (an integer 1..65535), got ${String(proxyPort)}`,
    );
  }
  return { network, proxyPort };
}

/**
 * A checked network mode (checkedNetwork) as the helper's flags (R7.15, R7.16): `--no-network`,
 * `--proxy-port N`, or none. Throws SANDBOX_UNAVAILABLE when the kernel's Landlock cannot hold TCP
 * connects to one port.
 */
function networkFlags(network: CheckedNetwork, abi: number): string[] {
  if (network.network === 'none') return ['--no-network'];
  if (network.network === 'host') return [];
  if (abi < 4) {
    throw new AhmaError(
      'SANDBOX_UNAVAILABLE',
      `--network proxy needs Landlock ABI 4 to keep commands' TCP connects to the egress proxy's port; this kernel offers ABI ${String(abi)}, which would leave every address reachable.\n${FIX_PROXY}`,
    );
  }
  return ['--proxy-port', String(network.proxyPort)];
}

/**
 * The writable paths a command keeps: all of them, but for a read_only call none that overlaps the
 * scope (Landlock cannot take a subtree out of a grant, so a path above the scope goes too).
 */
function writableFor(
  own: OwnConfinement,
  paths: readonly string[],
  scope: string,
): readonly string[] {
  return own.readOnlyScope === true ? paths.filter((path) => !overlaps(path, scope)) : paths;
}

/** A command's own confinement as helper flags beyond the server's, network checked like it. */
function ownFlags(
  own: OwnConfinement,
  abi: number,
  scope: string,
): { network?: string[]; more: string[] } {
  return {
    ...(own.network === undefined
      ? {}
      : { network: networkFlags(checkedNetwork(own.network, own.proxyPort), abi) }),
    more: [
      ...writableFor(own, own.writable ?? [], scope).flatMap((path) => ['--rw', path]),
      ...(own.pty === undefined
        ? []
        : ['--pty', `${String(own.pty.cols)}x${String(own.pty.rows)}`]),
    ],
  };
}

/** Probes the mechanism and builds the sandbox, or throws SANDBOX_UNAVAILABLE explaining the fix. */
export async function createSandbox(options: SandboxOptions): Promise<Sandbox> {
  const platform = options.platform ?? process.platform;
  // Checked first: a proxy without its port is a caller's mistake whatever the platform.
  const network: CheckedNetwork =
    options.disabled === true
      ? { network: 'host', proxyPort: undefined }
      : checkedNetwork(options.network ?? 'host', options.proxyPort);
  const helperPath = options.helperPath ?? defaultHelperPath();
  // mkdtemp, not a predictable name: commands write the temp dir and could plant a link there.
  const tempDir = options.tempDir ?? tmpdir();
  const cacheRoot = options.cacheRoot ?? (await mkdtemp(join(tempDir, 'ahma-cache-')));
  await mkdir(cacheRoot, { recursive: true });
  const writable = await realPaths([
    options.scope,
    ...(options.writableTemp === false ? [] : [tempDir]),
    cacheRoot,
    ...(options.extraWritable ?? []),
  ]);
  const warnings: string[] = [];
  if (process.getuid?.() === 0) {
    warnings.push(
      options.keepCapabilities === true
        ? "running as root with --keep-capabilities: commands hold root's capabilities (they can change any file's owner and mode, and read the server's /proc/<pid>/environ; Landlock still confines their reads and writes of files); run as an ordinary user instead"
        : "running as root: commands hold no capabilities, but root's own files outside the scope can still have their mode, times and extended attributes changed (Landlock does not cover these calls); run as an ordinary user instead",
    );
  }
  const policy = readPolicy(options, writable, helperPath, warnings);
  const rules = platform === 'linux' && options.disabled !== true ? coverRules(policy) : [];
  const base = {
    scope: options.scope,
    writable,
    cacheRoot: await realpath(cacheRoot),
    policy,
    rules,
    network: network.network,
    proxyPort: network.proxyPort,
    // Protected only by the Linux helper (below); elsewhere watched.
    handoff:
      options.handoff === false
        ? { mechanism: 'off' as const, protect: [], pin: [] }
        : {
            mechanism: 'detect' as const,
            reason:
              options.disabled === true
                ? '--no-sandbox: commands run unconfined'
                : `no mount namespaces on ${platform}`,
            protect: [],
            pin: [],
          },
  };
  // The read policy as helper flags; writes are passed apart (confine() grants other ones).
  const readFlags = rules.flatMap((rule) =>
    rule.access === 'read'
      ? ['--read', rule.path]
      : rule.access === 'list'
        ? ['--list', rule.path]
        : [],
  );
  const writeFlags = rules.flatMap((rule) => (rule.access === 'write' ? ['--rw', rule.path] : []));
  // A read_only call's writes: every write rule that covers part of the scope becomes a read rule —
  // the scope's own, and one above it (a scope inside the temp directory), since Landlock cannot
  // take a subtree out of a grant: such a call may not write that whole path either.
  const readOnlyScopeFlags = rules.flatMap((rule) =>
    rule.access !== 'write'
      ? []
      : overlaps(rule.path, options.scope)
        ? ['--read', rule.path]
        : ['--rw', rule.path],
  );

  const grace = ['--grace-ms', String(options.graceMs ?? DEFAULT_TIMINGS.graceMs)];
  // --scope: the helper checks where a command really starts (after its change of directory), so
  // a directory swapped for a link after the server checked working_directory cannot move it out.
  const inScope = ['--scope', options.scope];
  // The Linux helper runs (and supervises) commands one by one, or as the pool's zygote; `flags`
  // with a command's own network mode when it has one (wrap's override).
  const linuxHelper = (
    flags: (own?: OwnConfinement) => readonly string[],
    confinement: readonly string[],
  ) => ({
    wrap: (argv: readonly string[], own?: OwnConfinement) => ({
      file: helperPath,
      args: [...flags(own), ...inScope, '--', ...argv],
    }),
    poolCommand: (size: number) => ({
      file: helperPath,
      args: [...flags(), ...inScope, '--pool', String(size), '--'],
    }),
    confine: (paths: readonly string[], argv: readonly string[]) => ({
      file: helperPath,
      args: [...confinement, ...paths.flatMap((path) => ['--rw', path]), ...grace, '--', ...argv],
    }),
  });

  if (options.disabled === true) {
    warnings.push(
      "--no-sandbox: commands run UNCONFINED and can write anywhere this user can, Ahma's own files included (the check that refuses an Ahma installed inside a writable path is skipped)",
    );
    if ((options.network ?? 'host') !== 'host') {
      warnings.push(
        `--no-sandbox: --network ${String(options.network)} is NOT enforced: commands reach any address`,
      );
    }
    const unconfined = {
      ...base,
      mechanism: 'none' as const,
      abi: undefined,
      warnings,
    };
    // On Linux the helper still supervises the process tree (no orphans), without confinement.
    if (platform === 'linux') {
      return {
        ...unconfined,
        refreshHandoff: () => false,
        ...linuxHelper(
          (own) => [
            '--unconfined',
            ...grace,
            ...(own === undefined ? [] : ownFlags(own, 0, options.scope).more),
          ],
          ['--unconfined'],
        ),
      };
    }
    const direct = (argv: readonly string[]) => ({
      file: '/bin/sh',
      args: ['-c', 'exec "$@" 2>&1', 'sh', ...argv],
    });
    return {
      ...unconfined,
      refreshHandoff: () => false,
      wrap: direct,
      poolCommand: () => undefined,
      confine: (_, argv) => direct(argv),
    };
  }

  if (platform === 'linux') {
    // A helper that cannot run says so: it is no sign of a kernel without Landlock.
    const unusable = helperProblem(helperPath);
    if (unusable !== undefined) {
      throw new AhmaError(
        'SANDBOX_UNAVAILABLE',
        `${unusable}\nAhma confines every command through this helper and will not run commands unconfined. In a trusted, disposable environment only, --no-sandbox runs commands unconfined.`,
      );
    }
    const probe = await probeLandlock(helperPath);
    if (!probe.available) {
      throw new AhmaError(
        'SANDBOX_UNAVAILABLE',
        `Landlock is unavailable: ${probe.reason}\n${FIX_LINUX}`,
      );
    }
    // R7.11: the hand-off files existing now, read-only in the helper's mount namespace.
    const allow = options.handoff === false ? [] : (options.handoff?.allow ?? []);
    const mounts = (): SandboxHandoff => {
      makeMissingHooksDirectories(options.scope, writable);
      return { mechanism: 'mount', ...handoffMounts(options.scope, writable, allow) };
    };
    let handoff: SandboxHandoff = base.handoff;
    if (options.handoff !== false && probe.handoff === 'mount') handoff = mounts();
    else if (options.handoff !== false) {
      handoff = { ...base.handoff, reason: probe.handoffReason ?? 'unknown' };
    }
    // R7.16: refused now rather than at the first command (the helper would refuse it too).
    const serverNetwork = networkFlags(network, probe.abi);
    const flags = (own?: OwnConfinement) => {
      const extra = own === undefined ? undefined : ownFlags(own, probe.abi, options.scope);
      return [
        ...readFlags,
        ...(own?.readOnlyScope === true ? readOnlyScopeFlags : writeFlags),
        ...(extra?.more ?? []),
        ...handoff.protect.flatMap((path) => ['--protect', path]),
        ...handoff.pin.flatMap((path) => ['--pin', path]),
        ...(options.allowUnixSockets === true ? ['--allow-unix-sockets'] : []),
        ...(extra?.network ?? serverNetwork),
        ...(options.keepCapabilities === true ? ['--keep-capabilities'] : []),
        ...grace,
      ];
    };
    if (probe.abi < 6) {
      warnings.push(
        `Landlock ABI ${String(probe.abi)} (< 6, Linux < 6.12): commands can signal each other and the pool's processes, and reach abstract unix sockets outside; upgrade the kernel for that isolation`,
      );
    }
    return {
      ...base,
      mechanism: 'landlock',
      abi: probe.abi,
      warnings,
      get handoff() {
        return handoff;
      },
      refreshHandoff: () => {
        if (handoff.mechanism !== 'mount') return false;
        handoff = mounts();
        return true;
      },
      ...linuxHelper(flags, readFlags),
    };
  }

  if (platform === 'darwin') {
    // R7.10: the same deny lists as on Linux, in every spelling macOS may see (/private/etc/…);
    // everything else stays readable. The profile is built (and its paths checked) once.
    const reads = seatbeltReads(policy.denies, options.extraReadable ?? []);
    const seatbeltNetwork = { mode: network.network, proxyPort: network.proxyPort };
    const profile = seatbeltProfile(writable, reads, seatbeltNetwork);
    return {
      ...base,
      mechanism: 'seatbelt',
      abi: undefined,
      warnings,
      refreshHandoff: () => false,
      wrap: (argv, own) => {
        if (own === undefined) return seatbeltLine(profile, argv);
        const mode =
          own.network === undefined ? network : checkedNetwork(own.network, own.proxyPort);
        return seatbeltLine(
          seatbeltProfile(
            writableFor(own, [...writable, ...(own.writable ?? [])], options.scope),
            reads,
            {
              mode: mode.network,
              proxyPort: mode.proxyPort,
            },
          ),
          argv,
        );
      },
      poolCommand: () => undefined,
      confine: (paths, argv) => seatbeltLine(seatbeltProfile(paths, reads, seatbeltNetwork), argv),
    };
  }

  throw new AhmaError(
    'SANDBOX_UNAVAILABLE',
    `no sandbox mechanism for platform "${platform}": Ahma supports Linux (Landlock) and macOS (Seatbelt). On Windows, run it inside WSL2.`,
  );
}

/**
 * R7.10: the system, the scope, the temp dir, the caches and HOME are readable (the writable paths
 * also writable), but for the shipped deny lists, --deny-read and Ahma's private state; --allow-read
 * adds paths, even inside a denied one.
 */
function readPolicy(
  options: SandboxOptions,
  writable: readonly string[],
  helperPath: string,
  warnings: string[],
): ReadPolicy {
  const home = usableHome(options.home);
  const denies = readDenies(options, home).filter((deny) => {
    // A deny inside a writable path would leave its directory listable only, so no file could be
    // made beside it: an operator's entry there is refused with a warning, not half-applied.
    const clash = writable.find((path) => isInside(deny.path, path));
    if (deny.list !== '--deny-read' || clash === undefined) return true;
    warnings.push(
      `--deny-read ${deny.path} is NOT enforced: it lies inside ${clash}, which commands may write (Landlock could deny it only by forbidding new files beside it); move it out`,
    );
    return false;
  });
  // The broad grants give way to a deny that names them or a directory above them (--deny-read ~);
  // the paths named one by one (the scope, the caches, --allow-read) are kept.
  const broad = [
    ...SYSTEM_READ,
    // HOME = / is no HOME (usableHome): it would grant the whole system, /dev included.
    ...(home === undefined ? [] : [home]),
  ].filter((path) => deniedBy(denies, path) === undefined);
  const grants: Grant[] = [
    // Names stay listable everywhere (contents do not): `ls /`, and the way down to a denied file.
    { path: '/', access: 'list' },
    ...broad.map((path) => ({ path, access: 'read' as const })),
    // The helper's directory: the pool's template shell loads its builtin (ahma-unit.so) from it.
    { path: dirname(helperPath), access: 'read' },
    ...(options.extraReadable ?? []).map((path) => ({ path, access: 'read' as const })),
    ...writable.map((path) => ({ path, access: 'write' as const })),
  ];
  return { grants, denies };
}

/** The shipped deny lists, --deny-read and Ahma's private state. */
function readDenies(options: SandboxOptions, home: string | undefined): DenyEntry[] {
  return [
    ...shippedDenies(home),
    ...(options.denyRead ?? []).flatMap((path) => {
      const expanded = expandHome(path, home);
      return expanded === undefined
        ? []
        : [{ path: expanded, except: [], list: '--deny-read', why: 'denied by the operator' }];
    }),
    ...(options.privateState === undefined
      ? []
      : [
          {
            path: options.privateState,
            except: [],
            list: PRIVATE_STATE_LIST,
            why: "other operations' output logs, tokens",
          },
        ]),
  ];
}

function seatbeltLine(profile: SeatbeltProfile, argv: readonly string[]): CommandLine {
  const [file = SANDBOX_EXEC, ...args] = seatbeltArgv(profile, argv);
  return { file, args };
}

export interface WritablePathsOptions {
  readonly scope: string;
  readonly writableTemp?: boolean | undefined;
  /** The temp directory (default: the process's, os.tmpdir()). */
  readonly tempDir?: string | undefined;
  readonly extraWritable?: readonly string[] | undefined;
  readonly platform?: NodeJS.Platform | undefined;
}

/**
 * Everything commands will be able to write, as real paths with what each is, before anything is
 * created or run: the scope, the temp dir, extra paths, and what the mechanism grants on its own
 * (native/landlock.c's device directories; the Seatbelt profile's temp folders). The per-server
 * cache directory is not here: the engine places it after checking against these.
 */
export async function writablePaths(options: WritablePathsOptions): Promise<LabelledPath[]> {
  const platform = options.platform ?? process.platform;
  const implicit =
    platform === 'darwin' ? ['/private/tmp', '/private/var/folders'] : ['/dev/shm', '/dev/pts'];
  const listed: LabelledPath[] = [
    { path: await realpath(options.scope), label: 'the sandbox scope' },
    ...(options.writableTemp === false
      ? []
      : [{ path: await realpath(options.tempDir ?? tmpdir()), label: 'the temp directory' }]),
    ...(await Promise.all(
      (options.extraWritable ?? []).map(async (path) => ({
        path: await realpath(path),
        label: 'an extra writable path',
      })),
    )),
  ];
  for (const path of implicit) {
    const real = await realpath(path).catch((error: unknown) => {
      if (errorCode(error) === 'ENOENT') return undefined;
      throw error;
    });
    if (real !== undefined) listed.push({ path: real, label: `${path} (always writable)` });
  }
  return listed;
}

async function realPaths(paths: readonly string[]): Promise<string[]> {
  const real = await Promise.all(paths.map((path) => realpath(path)));
  return [...new Set(real)];
}
