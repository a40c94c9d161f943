// Harness of the red-team suite (R7.6): real exploit programs (exploits/*.c, compiled here with cc)
// run through the BUILT server (bin/ahma-shell.js over stdio, driven by the SDK's real Client), as
// root and as an unprivileged user, and the test then checks that nothing outside changed.
//
// Identities: "root" is the test process itself (skipped when it is not root); "user" is uid/gid
// 65534 (nobody) through `setpriv --reuid --regid --clear-groups` when the test process is root,
// or the test process's own ordinary user otherwise. The unprivileged server cannot be assumed to
// read the checkout (CI may clone under /root, mode 700), and the machine's directories are never
// chmod-ed: it runs from a MIRROR of the built server, the few files it loads at run time (the
// bundled dist/, the bin shim, @ahma/core's package.json, dist/index.js and dist/native/, the
// bundled tool catalog), copied into a world-readable directory of our own under /var/tmp. Each
// identity gets a HOME, a sandbox scope and an "outside" directory it owns, all under /var/tmp
// (the temp directory is writable by design, so nothing there counts as outside), and a TMPDIR of
// its own in the temp directory.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import {
  chmod,
  chown,
  cp,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe } from 'vitest';
import {
  descendantsOf,
  processInfo,
  processes,
  sleep,
  structured,
  textOf,
  waitFor,
  type CommandResult,
  type ProcessInfo,
} from '../support/harness.js';

export { descendantsOf, processInfo, processes, sleep, structured, textOf, waitFor };
export type { CommandResult, ProcessInfo };

const run = promisify(execFile);

export const PACKAGE_DIR = fileURLToPath(new URL('../..', import.meta.url));
export const EXPLOITS_DIR = fileURLToPath(new URL('./exploits', import.meta.url));
const REPO_DIR = join(PACKAGE_DIR, '..', '..');

/** uid and gid of the unprivileged identity when the test process is root: nobody/nogroup. */
export const NOBODY = 65534;

export interface Identity {
  readonly name: 'root' | 'user';
  readonly uid: number;
  readonly gid: number;
  /** The server is started through setpriv as uid/gid (the test process is root). */
  readonly switchUser: boolean;
  /** Why this identity cannot run on this machine; undefined when it can. */
  readonly skip: string | undefined;
}

/** The identities every attack runs as (describe.each over them). */
export function identities(): Identity[] {
  const uid = process.getuid?.() ?? -1;
  const gid = process.getgid?.() ?? -1;
  const root = uid === 0;
  const setpriv = onPath('setpriv');
  return [
    {
      name: 'root',
      uid: 0,
      gid: 0,
      switchUser: false,
      skip: root ? undefined : `the test process is not root (uid ${String(uid)})`,
    },
    root
      ? {
          name: 'user',
          uid: NOBODY,
          gid: NOBODY,
          switchUser: true,
          skip:
            setpriv === undefined
              ? 'setpriv (util-linux) is not installed: cannot start a server as nobody'
              : undefined,
        }
      : { name: 'user', uid, gid, switchUser: false, skip: undefined },
  ];
}

export const IDENTITIES = identities();

/**
 * A file's attacks once per identity. The identities run side by side — each has its own server,
 * scope and processes, and the file still has the package's run to itself — and one identity's
 * tests run in order, as written. A file that watches something machine-wide (import-devices,
 * /dev/pts) keeps describe.each(IDENTITIES), one identity after the other.
 */
export function eachIdentity(name: string, attacks: (identity: Identity) => void): void {
  describe.concurrent.each(IDENTITIES)(name, (identity) => {
    describe.sequential('in order', () => {
      attacks(identity);
    });
  });
}

function onPath(program: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (dir !== '' && existsSync(join(dir, program))) return join(dir, program);
  }
  return undefined;
}

/** `file args…` as the identity (through setpriv when it is another user). */
export function asIdentity(
  identity: Identity,
  file: string,
  args: readonly string[],
): { command: string; args: string[] } {
  if (!identity.switchUser) return { command: file, args: [...args] };
  return {
    command: 'setpriv',
    args: [
      `--reuid=${String(identity.uid)}`,
      `--regid=${String(identity.gid)}`,
      '--clear-groups',
      '--',
      file,
      ...args,
    ],
  };
}

/** Single-quotes a word for bash. */
export function quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

// ---- verdicts ---------------------------------------------------------------------------------

export interface Verdict {
  readonly attempt: string;
  readonly kind: 'ESCAPED' | 'blocked' | 'error' | 'info';
  readonly detail: string;
  /** The whole line, for assertion messages. */
  readonly line: string;
}

/** Every verdict line an exploit printed (see exploits/redteam.h). */
export function verdicts(output: string): Verdict[] {
  const found: Verdict[] = [];
  for (const line of output.split('\n')) {
    const match = /^(\S+): (ESCAPED|blocked|error|info): (.*)$/.exec(line);
    if (match?.[1] !== undefined && match[3] !== undefined) {
      found.push({
        attempt: match[1],
        kind: match[2] as Verdict['kind'],
        detail: match[3],
        line,
      });
    }
  }
  return found;
}

/**
 * The verdict line of one attempt, or a line saying it is missing (with the whole output), so
 * that `expect(verdictLine(…)).toMatch(/^x: blocked: EPERM/)` fails with what really happened.
 */
export function verdictLine(output: string, attempt: string): string {
  const verdict = verdicts(output).find((v) => v.attempt === attempt && v.kind !== 'info');
  return verdict?.line ?? `${attempt}: (no verdict) output was: ${JSON.stringify(output)}`;
}

/** A pattern for "ATTEMPT: blocked: <one of ERRNOS>". */
export function blockedWith(attempt: string, errnos: readonly string[]): RegExp {
  const escaped = attempt.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped}: blocked: (${errnos.join('|')})\\b`);
}

// ---- what "nothing changed" means -------------------------------------------------------------

export interface FileState {
  readonly type: 'file' | 'dir' | 'symlink' | 'other';
  readonly mode: string;
  readonly uid: number;
  readonly gid: number;
  readonly size: number;
  readonly mtimeNs: string;
  readonly ctimeNs: string;
  readonly sha256: string | undefined;
}

/** Bytes, mode, owner, times of a path (not followed), or undefined when it does not exist. */
export async function fileState(path: string): Promise<FileState | undefined> {
  const st = await lstat(path, { bigint: true }).catch(() => undefined);
  if (st === undefined) return undefined;
  const type = st.isFile()
    ? 'file'
    : st.isDirectory()
      ? 'dir'
      : st.isSymbolicLink()
        ? 'symlink'
        : 'other';
  return {
    type,
    mode: (Number(st.mode) & 0o7777).toString(8).padStart(4, '0'),
    uid: Number(st.uid),
    gid: Number(st.gid),
    size: Number(st.size),
    mtimeNs: st.mtimeNs.toString(),
    ctimeNs: st.ctimeNs.toString(),
    sha256: type === 'file' ? await digest(path) : undefined,
  };
}

/** The file's SHA-256, or "unreadable" (write-only files of /proc and /sys). */
async function digest(path: string): Promise<string> {
  return readFile(path).then(
    (bytes) => createHash('sha256').update(bytes).digest('hex'),
    () => 'unreadable',
  );
}

/**
 * What must not change of a device or a /proc or /sys file: its type, mode, owner and bytes. Their
 * times are left out: the kernel sets them on its own (procfs inodes come and go, others write to
 * /dev/kmsg).
 */
export async function nodeState(path: string): Promise<Partial<FileState> | undefined> {
  const state = await fileState(path);
  if (state === undefined) return undefined;
  const { type, mode, uid, gid, sha256 } = state;
  return { type, mode, uid, gid, sha256 };
}

/** The state of every entry of a directory tree, by relative path. */
export async function treeState(dir: string): Promise<Record<string, FileState | undefined>> {
  const result: Record<string, FileState | undefined> = {};
  const walk = async (relative: string): Promise<void> => {
    const entries = await readdir(join(dir, relative), { withFileTypes: true });
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
      result[path] = await fileState(join(dir, path));
      if (entry.isDirectory()) await walk(path);
    }
  };
  await walk('');
  return result;
}

/** True while the process exists and is not stopped (a zombie counts as gone). */
export async function aliveAndRunning(pid: number): Promise<boolean> {
  const info = await processInfo(pid);
  return info !== undefined && /^[RSD]$/.test(info.state);
}

/** Sends a signal, ignoring a process that is already gone. */
export function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // gone
  }
}

// ---- one run directory per test file: exploits and the mirror ---------------------------------

/** What starts a server: node and the bin shim. */
export interface Runtime {
  readonly node: string;
  readonly bin: string;
}

/** Binaries and the server's mirror shared by a test file's identities. */
export class RunDir {
  readonly dir: string;
  readonly #binaries = new Map<string, string>();
  #mirror: Promise<Runtime> | undefined;
  #static: boolean | undefined;

  private constructor(dir: string) {
    this.dir = dir;
  }

  static async create(): Promise<RunDir> {
    const dir = await realpath(await mkdtemp('/var/tmp/ahma-redteam-'));
    await chmod(dir, 0o755);
    await mkdir(join(dir, 'bin'), { mode: 0o755 });
    await chmod(join(dir, 'bin'), 0o755);
    return new RunDir(dir);
  }

  /** Compiles exploits/NAME.c (statically when the toolchain can) into the shared bin/ directory. */
  async compile(name: string): Promise<string> {
    const output = join(this.dir, 'bin', name);
    const source = join(EXPLOITS_DIR, `${name}.c`);
    const flags = [
      '-std=gnu11',
      '-O2',
      '-Wall',
      '-Wextra',
      `-I${EXPLOITS_DIR}`,
      '-o',
      output,
      source,
    ];
    if (this.#static !== false) {
      try {
        await run('cc', ['-static', ...flags]);
        this.#static = true;
      } catch (error) {
        if (this.#static === true) throw error;
        this.#static = false;
      }
    }
    if (this.#static === false) await run('cc', flags);
    await chmod(output, 0o755);
    this.#binaries.set(name, output);
    return output;
  }

  binary(name: string): string {
    const path = this.#binaries.get(name);
    if (path === undefined) throw new Error(`exploit ${name} was not compiled for this file`);
    return path;
  }

  /**
   * A world-readable copy of the built server (see the header) and the node that runs it: the
   * test's own node when the identity can run it, else a copy (an official node binary stands
   * alone; one installed under /root, e.g. by nvm, is out of the identity's reach). Made once per
   * file, only when a server runs as another user.
   */
  mirror(identity: Identity): Promise<Runtime> {
    // One copy however many describes ask at once.
    return (this.#mirror ??= this.#copy(identity));
  }

  async #copy(identity: Identity): Promise<Runtime> {
    const root = join(this.dir, 'app');
    const server = join(root, 'packages', 'shell-server');
    const coreSource = await realpath(join(PACKAGE_DIR, 'node_modules', '@ahma', 'core'));
    const core = join(server, 'node_modules', '@ahma', 'core');
    if (!existsSync(join(PACKAGE_DIR, 'dist', 'cli.js'))) {
      throw new Error(`${PACKAGE_DIR}/dist is missing: run \`pnpm build\` first`);
    }
    const noMaps = (source: string) => !source.endsWith('.map');
    await cp(join(PACKAGE_DIR, 'bin'), join(server, 'bin'), { recursive: true });
    await cp(join(PACKAGE_DIR, 'dist'), join(server, 'dist'), { recursive: true, filter: noMaps });
    await cp(join(PACKAGE_DIR, 'package.json'), join(server, 'package.json'));
    await cp(join(coreSource, 'package.json'), join(core, 'package.json'));
    await cp(join(coreSource, 'dist', 'index.js'), join(core, 'dist', 'index.js'));
    await cp(join(coreSource, 'dist', 'native'), join(core, 'dist', 'native'), { recursive: true });
    if (existsSync(join(REPO_DIR, 'tools'))) {
      await cp(join(REPO_DIR, 'tools'), join(root, 'tools'), { recursive: true });
    }
    let node = process.execPath;
    const probe = asIdentity(identity, node, ['-e', '']);
    if (
      !(await run(probe.command, probe.args).then(
        () => true,
        () => false,
      ))
    ) {
      node = join(root, 'node', 'bin', 'node');
      await mkdir(dirname(node), { recursive: true });
      await cp(process.execPath, node);
    }
    await openUp(root);
    return { node, bin: join(server, 'bin', 'ahma-shell.js') };
  }

  async dispose(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** Makes a tree of our own readable by everyone (directories and executables 755, files 644). */
async function openUp(path: string): Promise<void> {
  const st = await stat(path);
  if (st.isDirectory()) {
    await chmod(path, 0o755);
    for (const entry of await readdir(path)) await openUp(join(path, entry));
  } else {
    await chmod(path, (st.mode & 0o111) !== 0 ? 0o755 : 0o644);
  }
}

// ---- a server as one identity ------------------------------------------------------------------

export interface RunOptions {
  readonly working_directory?: string;
  readonly timeout_seconds?: number;
  /** SPEC §14 lanes: `service` runs beside the workspace's writers (a bystander, a victim). */
  readonly concurrency?: 'exclusive' | 'read_only' | 'service';
}

/** One running ahma-shell and its SDK client. */
export class Server {
  readonly client: Client;
  readonly pid: number;
  readonly #stderr: () => string;
  #closed: Promise<void> | undefined;

  constructor(client: Client, pid: number, stderr: () => string) {
    this.client = client;
    this.pid = pid;
    this.#stderr = stderr;
  }

  stderr(): string {
    return this.#stderr();
  }

  async call(
    name: string,
    args: Record<string, unknown> = {},
    timeoutMs = 60_000,
  ): Promise<CallToolResult> {
    return (await this.client.callTool({ name, arguments: args }, undefined, {
      timeout: timeoutMs,
    })) as CallToolResult;
  }

  /** Starts a sandboxed_shell script (async) and returns its operation id. */
  async start(command: string, options: RunOptions = {}): Promise<string> {
    const started = await this.call('sandboxed_shell', { command, ...options });
    const content = started.structuredContent as
      { operation_id?: string; status?: string } | undefined;
    if (started.isError === true || content?.operation_id === undefined) {
      throw new Error(`sandboxed_shell was refused: ${textOf(started)}`);
    }
    return content.operation_id;
  }

  /** Waits (at most `seconds`) for an operation; its result, or undefined while it still runs. */
  async wait(id: string, seconds = 30): Promise<CommandResult | undefined> {
    const result = await this.call(
      'await',
      { ids: [id], timeout_seconds: seconds },
      (seconds + 15) * 1000,
    );
    const [operation] = structured<{ operations: (CommandResult | { status: 'running' })[] }>(
      result,
    ).operations;
    if (operation === undefined) throw new Error(`${id} is unknown: ${textOf(result)}`);
    return operation.status === 'running' ? undefined : (operation as CommandResult);
  }

  /** Runs a sandboxed_shell script to its end (default timeout 30 s) and returns the result. */
  async sh(command: string, options: RunOptions = {}): Promise<CommandResult> {
    const timeout = options.timeout_seconds ?? 30;
    const id = await this.start(command, { ...options, timeout_seconds: timeout });
    const result = await this.wait(id, timeout + 10);
    if (result === undefined)
      throw new Error(`${id} did not finish within ${String(timeout + 10)} s`);
    return result;
  }

  async cancel(id: string): Promise<CallToolResult> {
    return this.call('cancel', { id, reason: 'red-team test' });
  }

  /** The pool's zygote (`ahma-sandbox … --pool N`), the server's child. */
  async zygote(timeoutMs = 10_000): Promise<number> {
    const found = await waitFor(
      async () =>
        (await processes()).find(
          (info) => info.ppid === this.pid && / --pool \d+/.test(info.cmdline),
        ),
      `the zygote of server ${String(this.pid)}`,
      timeoutMs,
    );
    return found.pid;
  }

  /**
   * Stops the server whatever a test did to its processes: resumes stopped ones, closes the
   * client (stdin EOF, then SIGTERM, SIGKILL), and kills whatever of its tree is left.
   */
  close(): Promise<void> {
    return (this.#closed ??= (async () => {
      const tree = await descendantsOf(this.pid);
      for (const info of [{ pid: this.pid }, ...tree]) signal(info.pid, 'SIGCONT');
      await Promise.race([this.client.close(), sleep(8000)]);
      await waitFor(
        async () => (await processInfo(this.pid)) === undefined,
        'the server to exit',
        5000,
      ).catch(() => signal(this.pid, 'SIGKILL'));
      for (const info of tree) signal(info.pid, 'SIGKILL');
    })());
  }
}

/** An `ahma-shell --mode http` started by a seat. */
export interface HttpServerProcess {
  /** The MCP endpoint it printed. */
  readonly url: string;
  readonly pid: number;
  /** The bearer token it made or was given (read from its token file), if it printed one. */
  readonly token: string | undefined;
  readonly tokenFile: string | undefined;
  stderr(): string;
  /** SIGTERM, then SIGKILL for it and whatever it left. */
  close(): Promise<void>;
}

/** The directories and server of one identity in one test file. */
export class Seat {
  readonly identity: Identity;
  readonly runDir: RunDir;
  /** Everything of this identity under /var/tmp: home/, scope/, outside/. */
  readonly base: string;
  readonly home: string;
  readonly scope: string;
  readonly outside: string;
  /** The servers' TMPDIR (the temp directory the sandbox leaves writable). */
  readonly temp: string;
  readonly #servers: Server[] = [];
  readonly #children: ChildProcess[] = [];

  private constructor(identity: Identity, runDir: RunDir, base: string, temp: string) {
    this.identity = identity;
    this.runDir = runDir;
    this.base = base;
    this.home = join(base, 'home');
    this.scope = join(base, 'scope');
    this.outside = join(base, 'outside');
    this.temp = temp;
  }

  static async create(identity: Identity, runDir: RunDir): Promise<Seat> {
    // A directory of its own: one file's describes for one identity may run at once.
    const base = await mkdtemp(join(runDir.dir, `${identity.name}-`));
    // Beside the identity's directories, not in the test's own temp dir: that one may be private
    // to the test process (the suite's global setup makes it 0700), out of the user's reach.
    const temp = await realpath(await mkdtemp(join(runDir.dir, `${identity.name}-tmp-`)));
    const seat = new Seat(identity, runDir, base, temp);
    await chmod(base, 0o755);
    await seat.own(base);
    for (const dir of [seat.home, seat.scope, seat.outside]) {
      await mkdir(dir, { mode: 0o755 });
      await seat.own(dir);
    }
    await seat.own(temp);
    await chmod(temp, 0o700);
    return seat;
  }

  /** Gives a path of ours to the identity (no-op when the identity is the test process). */
  async own(path: string): Promise<void> {
    if (this.identity.switchUser) await chown(path, this.identity.uid, this.identity.gid);
  }

  /** Writes a file owned by the identity. */
  async write(path: string, content: string | Buffer, mode = 0o644): Promise<string> {
    await writeFile(path, content, { mode });
    await chmod(path, mode);
    await this.own(path);
    return path;
  }

  /** Makes a directory owned by the identity. */
  async mkdir(path: string): Promise<string> {
    await mkdir(path, { mode: 0o755 });
    await this.own(path);
    return path;
  }

  /** The compiled exploit's path. */
  exploit(name: string): string {
    return this.runDir.binary(name);
  }

  /** A bash command line running the exploit with its arguments, each quoted. */
  x(name: string, ...args: readonly (string | number)[]): string {
    return [this.exploit(name), ...args.map(String)].map(quote).join(' ');
  }

  /** The environment of this identity's servers: a clean one, with its own HOME and TMPDIR. */
  env(node: string): Record<string, string> {
    const user = this.identity.switchUser ? 'nobody' : (process.env['USER'] ?? 'user');
    return {
      PATH: [
        dirname(node),
        '/usr/local/sbin',
        '/usr/local/bin',
        '/usr/sbin',
        '/usr/bin',
        '/sbin',
        '/bin',
      ].join(':'),
      HOME: this.home,
      TMPDIR: this.temp,
      USER: user,
      LOGNAME: user,
      SHELL: '/bin/bash',
      LANG: 'C.UTF-8',
      // The compiled exploits lie outside every path the read policy grants (R7.10).
      AHMA_ALLOW_READ: join(this.runDir.dir, 'bin'),
    };
  }

  /** The node and the ahma-shell this identity runs (a readable copy for the switched user). */
  async runtime(): Promise<{ node: string; bin: string }> {
    return this.identity.switchUser
      ? await this.runDir.mirror(this.identity)
      : { node: process.execPath, bin: join(PACKAGE_DIR, 'bin', 'ahma-shell.js') };
  }

  /**
   * Starts `ahma-shell --mode stdio --sandbox-scope <scope> --inline-wait 0 …args` as the identity:
   * attacks start an operation and then watch or wait for it, so calls answer `started` at once.
   * `extraEnv` adds to (or overrides) the seat's environment.
   */
  async server(
    args: readonly string[] = [],
    scope = this.scope,
    extraEnv: Readonly<Record<string, string>> = {},
  ): Promise<Server> {
    const { node, bin } = await this.runtime();
    const { command, args: argv } = asIdentity(this.identity, node, [
      bin,
      '--mode',
      'stdio',
      '--sandbox-scope',
      scope,
      '--inline-wait',
      '0',
      ...args,
    ]);
    // The server's working directory is its HOME, not the scope: /proc/<server>/cwd must not be a
    // way into the scope (which is writable anyway) but a directory outside it.
    const transport = new StdioClientTransport({
      command,
      args: argv,
      env: { ...this.env(node), ...extraEnv },
      cwd: this.home,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const client = new Client({ name: 'ahma-red-team', version: '1.0.0' });
    try {
      await client.connect(transport);
    } catch (error) {
      await sleep(200); // the rest of its stderr
      throw new Error(
        `the server did not start as ${this.identity.name}: ${String(error)}\nstderr: ${stderr}`,
        { cause: error },
      );
    }
    const pid = transport.pid;
    if (pid === null) throw new Error('the server has no pid');
    const server = new Server(client, pid, () => stderr);
    this.#servers.push(server);
    return server;
  }

  /**
   * Starts `ahma-shell --mode http --http-port 0 --sandbox-scope <scope> --inline-wait 0 …args` as
   * the identity and waits for the URL it prints; its token file and unix socket are read from the
   * same lines. Stopped at dispose.
   */
  async httpServer(
    args: readonly string[] = [],
    scope = this.scope,
    extraEnv: Readonly<Record<string, string>> = {},
  ): Promise<HttpServerProcess> {
    const { node, bin } = await this.runtime();
    const { command, args: argv } = asIdentity(this.identity, node, [
      bin,
      '--mode',
      'http',
      '--http-port',
      '0',
      '--sandbox-scope',
      scope,
      '--inline-wait',
      '0',
      ...args,
    ]);
    const child = spawn(command, argv, {
      env: { ...this.env(node), ...extraEnv },
      cwd: this.home,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.#children.push(child);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    await Promise.race([
      waitFor(() => /listening on (http:\/\/\S+)\n/.test(stderr), 'the URL', 20_000),
      exited.then(() => {
        throw new Error(`the HTTP server exited as ${this.identity.name}: ${stderr}`);
      }),
    ]);
    const url = /listening on (http:\/\/\S+)\n/.exec(stderr)?.[1] ?? '';
    const tokenFile = /the token is in (\S+)\n/.exec(stderr)?.[1];
    const token = tokenFile === undefined ? undefined : (await readFile(tokenFile, 'utf8')).trim();
    const pid = child.pid ?? -1;
    return {
      url,
      pid,
      token,
      tokenFile,
      stderr: () => stderr,
      close: async () => {
        signal(pid, 'SIGTERM');
        await Promise.race([exited, sleep(8000)]);
        signal(pid, 'SIGKILL');
        for (const info of await descendantsOf(pid)) signal(info.pid, 'SIGKILL');
      },
    };
  }

  /** A helper process run OUTSIDE the sandbox as the identity (killed at dispose). */
  spawnOutside(file: string, args: readonly string[]): ChildProcess {
    const { command, args: argv } = asIdentity(this.identity, file, args);
    const child = spawn(command, argv, { stdio: ['pipe', 'pipe', 'inherit'], cwd: this.home });
    this.#children.push(child);
    return child;
  }

  async dispose(): Promise<void> {
    await Promise.all(this.#servers.splice(0).map((server) => server.close()));
    for (const child of this.#children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    await rm(this.base, { recursive: true, force: true });
    await rm(this.temp, { recursive: true, force: true });
  }
}

/**
 * The environment of a server that waits less at each step of stopping a command (SIGTERM, the
 * helper's SIGKILL, the server's backstop, its watchdog, the zygote's answer): AHMA_TEST_TIMINGS,
 * read by the runtime (runtime.ts). Only waits change, never what a command may reach; the
 * defaults stay covered by the tests that do not use it.
 */
export const SHORT_STOP_WAITS: Readonly<Record<string, string>> = {
  AHMA_TEST_TIMINGS: JSON.stringify({
    graceMs: 500,
    backstopSlackMs: 500,
    watchdogMs: 1000,
    zygoteAnswerMs: 500,
    zygoteStopMs: 1000,
  }),
};

// ---- vitest wiring ----------------------------------------------------------------------------

export interface RedTeamFile {
  /** The run directory of this file (valid inside tests and hooks). */
  readonly runDir: () => RunDir;
}

/** File-level hooks: a run directory with the exploits compiled, removed after the file. */
export function redTeamFile(exploits: readonly string[]): RedTeamFile {
  let runDir: RunDir | undefined;
  beforeAll(async () => {
    runDir = await RunDir.create();
    const dir = runDir;
    await Promise.all(exploits.map((name) => dir.compile(name)));
  }, 60_000);
  afterAll(async () => {
    await runDir?.dispose();
  });
  return {
    runDir: () => {
      if (runDir === undefined) throw new Error('the run directory is not ready');
      return runDir;
    },
  };
}

export interface Confined {
  readonly seat: () => Seat;
  /** The seat's first server, started with the args given to confined(). */
  readonly server: () => Server;
}

/**
 * Describe-level hooks for one identity: its seat and a server, disposed after the describe's
 * tests; every test is skipped, with the reason, when the identity cannot run. The server is one
 * for all the describe's tests, or with `perTest` a fresh one for each test (closed after it), for
 * attacks that would spill into the next test if they succeeded. `prepare` runs before any server
 * starts (e.g. to put tool definitions in the scope); `env` adds to the server's environment
 * (SHORT_STOP_WAITS, say).
 */
export function confined(
  file: RedTeamFile,
  identity: Identity,
  options: {
    args?: readonly string[];
    prepare?: (seat: Seat) => Promise<void>;
    perTest?: boolean;
    env?: Readonly<Record<string, string>>;
  } = {},
): Confined {
  let seat: Seat | undefined;
  let server: Server | undefined;
  beforeAll(async () => {
    if (identity.skip !== undefined) return;
    seat = await Seat.create(identity, file.runDir());
    await options.prepare?.(seat);
    if (options.perTest !== true) {
      server = await seat.server(options.args ?? [], seat.scope, options.env);
    }
  }, 60_000);
  beforeEach(async (context) => {
    if (identity.skip !== undefined) context.skip(identity.skip);
    if (options.perTest === true && seat !== undefined) {
      server = await seat.server(options.args ?? [], seat.scope, options.env);
    }
  }, 60_000);
  afterEach(async () => {
    if (options.perTest === true) await server?.close();
  }, 60_000);
  afterAll(async () => {
    await seat?.dispose();
  }, 60_000);
  return {
    seat: () => {
      if (seat === undefined) throw new Error(`no seat for ${identity.name}`);
      return seat;
    },
    server: () => {
      if (server === undefined) throw new Error(`no server for ${identity.name}`);
      return server;
    },
  };
}
