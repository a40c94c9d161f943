// Red team, R7.10: what a command may not read. A server of each identity runs with a HOME holding
// an SSH private key, AWS credentials and a GitHub CLI token, beside the files ssh must still read
// (known_hosts, config, the public key). A command tries every way in: cat, /proc/self/root, a
// symlink and a hard link in the scope, openat2, a subprocess of python; and Ahma's own private
// state: another operation's full output log, the HTTP server's token file, the OAuth token store.
// None of the secrets' bytes may appear in any result; the files ssh needs stay readable.
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { recordedLinks } from '../../src/ops/link-record.js';
import { confined, eachIdentity, redTeamFile, waitFor, type Seat } from './harness.js';

const file = redTeamFile([]);

const SECRETS = {
  key: 'RT-PRIVATE-KEY-d41d8cd98f00b204',
  aws: 'RT-AWS-SECRET-9e107d9d372bb682',
  gh: 'RT-GH-TOKEN-e4d909c290d0fb1c',
  oauth: 'RT-OAUTH-STORE-5d41402abc4b2a76',
};

/** Plants the secrets (0600, the identity's) and the files that must stay readable. */
async function plantHome(seat: Seat): Promise<void> {
  const home = seat.home;
  for (const dir of ['.ssh', '.aws', '.config', '.config/gh']) await seat.mkdir(join(home, dir));
  await seat.write(join(home, '.ssh', 'id_ed25519'), `${SECRETS.key}\n`, 0o600);
  await seat.write(join(home, '.ssh', 'id_ed25519.pub'), 'ssh-ed25519 AAAAC3rt rt@example\n');
  await seat.write(
    join(home, '.ssh', 'known_hosts'),
    'rt.example.org ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHJ0\n',
  );
  await seat.write(join(home, '.ssh', 'config'), 'Host rt.example.org\n  User rt-config-user\n');
  await seat.write(join(home, '.aws', 'credentials'), `[default]\nkey = ${SECRETS.aws}\n`, 0o600);
  await seat.write(join(home, '.config', 'gh', 'hosts.yml'), `token: ${SECRETS.gh}\n`, 0o600);
}

/** openat2(2) through ctypes: the newest way to open a file, with its own resolution flags. */
const OPENAT2 = [
  'import ctypes, os, struct, sys',
  'libc = ctypes.CDLL(None, use_errno=True)',
  'how = ctypes.create_string_buffer(struct.pack("QQQ", os.O_RDONLY, 0, 0))',
  'fd = libc.syscall(437, -100, sys.argv[1].encode(), how, 24)',
  'print("openat2:", os.read(fd, 200) if fd >= 0 else os.strerror(ctypes.get_errno()))',
].join('\n');

eachIdentity('as $name', (identity) => {
  const { seat, server } = confined(file, identity, { prepare: plantHome });

  const expectNoSecret = (output: string) => {
    for (const [name, value] of Object.entries(SECRETS)) expect(output, name).not.toContain(value);
  };

  it('R7.10: planted credentials cannot be read: cat, /proc/self/root, a symlink and a hard link in the scope, openat2, a subprocess', async () => {
    const home = seat().home;
    const key = join(home, '.ssh', 'id_ed25519');
    const aws = join(home, '.aws', 'credentials');
    const gh = join(home, '.config', 'gh', 'hosts.yml');
    const result = await server().sh(
      [
        `for f in ${key} ${aws} ${gh}; do cat "$f" 2>&1 || echo "cat:refused:$f"; done`,
        `cat /proc/self/root${key} 2>&1 || echo proc-root:refused`,
        `ln -s ${key} link-to-key && (cat link-to-key 2>&1 || echo symlink:refused)`,
        `ln ${aws} hard-to-aws 2>&1 || echo hardlink:refused`,
        `python3 -c '${OPENAT2}' ${key} 2>&1`,
        `python3 -c 'import subprocess; print(subprocess.run(["cat", "${gh}"], capture_output=True, text=True).stderr.strip())' 2>&1`,
        `sh -c 'cp ${aws} copy 2>&1 || echo cp:refused'`,
      ].join('\n'),
    );
    const output = result.output;
    expectNoSecret(output);
    for (const path of [key, aws, gh]) expect(output).toContain(`cat:refused:${path}`);
    expect(output).toContain('proc-root:refused');
    expect(output).toContain('symlink:refused');
    expect(output).toContain('hardlink:refused');
    expect(output).toMatch(/openat2: (Permission denied|Function not implemented)/);
    expect(output).toContain('cp:refused');
  });

  it('R7.10: ssh still reads known_hosts, its config and the public key; names in ~/.ssh stay listable', async () => {
    const home = seat().home;
    const result = await server().sh(
      [
        `ssh-keygen -F rt.example.org -f ${join(home, '.ssh', 'known_hosts')}`,
        // ssh finds its files through the passwd entry's home, not $HOME: name the seat's.
        `ssh -F ${join(home, '.ssh', 'config')} -G rt.example.org 2>/dev/null | grep -i "^user "`,
        `cat ${join(home, '.ssh', 'id_ed25519.pub')}`,
        `ls ${join(home, '.ssh')} | tr '\\n' ' '`,
      ].join('; '),
    );
    const output = result.output;
    expectNoSecret(output);
    expect(output).toContain('rt.example.org ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHJ0');
    expect(output).toMatch(/^user rt-config-user$/m);
    expect(output).toContain('ssh-ed25519 AAAAC3rt rt@example');
    expect(output).toContain('id_ed25519 id_ed25519.pub');
  });

  it('R7.10: ordinary work still runs under the default policy: git, npm install (offline), python3 -m venv', async () => {
    const result = await server().sh(
      [
        'set -e',
        'git init -q work && cd work && echo hi > a && git add a',
        'git -c user.name=rt -c user.email=rt@example.org commit -qm one && echo GIT-OK',
        'mkdir -p dep app && echo \'{"name":"dep","version":"1.0.0"}\' > dep/package.json',
        'echo \'{"name":"app","version":"1.0.0","dependencies":{"dep":"file:../dep"}}\' > app/package.json',
        '(cd app && npm install --offline --no-audit --no-fund >/dev/null && test -e node_modules/dep && echo NPM-OK)',
        'python3 -m venv --without-pip .venv && .venv/bin/python -c "print(\'VENV-OK\')"',
      ].join('\n'),
      { timeout_seconds: 120 },
    );
    expect(result.output).toContain('GIT-OK');
    expect(result.output).toContain('NPM-OK');
    expect(result.output).toContain('VENV-OK');
    expect(result.exit_code, result.output).toBe(0);
  });

  it("R7.10: another operation's full output log cannot be read", async () => {
    // Output past the result's limit is kept whole in a log in the private state, named in the
    // result: the marker line is the secret here.
    const big = await server().sh(
      `echo ${SECRETS.oauth}-LOG; head -c 3000000 /dev/zero | tr '\\0' x; echo`,
    );
    const log = /full output: ([^;\s]+);/.exec(big.output)?.[1];
    expect(log, big.output).toBeDefined();
    const reader = await server().sh(
      `cat ${log ?? ''} 2>&1 | head -c 300; echo; ls -l ${log ?? ''} 2>&1 | head -1`,
    );
    expect(reader.output).not.toContain(`${SECRETS.oauth}-LOG`);
    expect(reader.output).toContain('Permission denied');
  });

  it("SPEC §15 operations page: a command can neither read the page's one-time link nor use the page without its cookie", async () => {
    const http = await seat().httpServer();
    const link = /one-time link[^:]*: (\S+)\n/.exec(http.stderr())?.[1];
    expect(link, http.stderr()).toBeDefined();
    const root = join(http.tokenFile ?? '', '..');
    const origin = new URL(link ?? '').origin;
    // The link is printed, then recorded in the private state (link-record.ts): it is there.
    await waitFor(async () => (await recordedLinks(root)).includes(link ?? ''), 'the link file');
    try {
      const result = await server().sh(
        [
          `cat ${root}/servers/*/ops-page-link 2>&1 | head -3`,
          `grep -rho 'key=[A-Za-z0-9_-]*' ${root} 2>&1 | head -3`,
          `for path in /ops /ops/api/operations /ops/api/events; do curl -s -m 5 -o /dev/null -w "$path %{http_code}\\n" -H 'Sec-Fetch-Site: same-origin' ${origin}$path; done`,
          `curl -s -m 5 -o /dev/null -w "cancel %{http_code}\\n" -X POST -H 'Origin: ${origin}' -H 'Content-Type: application/json' -d '{"id":"x"}' ${origin}/ops/api/cancel`,
          `curl -s -m 5 -o /dev/null -w "guess %{http_code}\\n" '${origin}/ops/login?key=guessed'`,
        ].join('\n'),
      );
      expect(result.output).not.toContain(new URL(link ?? '').searchParams.get('key') ?? 'no key');
      expect(result.output).toContain('ops-page-link: Permission denied');
      for (const path of ['/ops', '/ops/api/operations', '/ops/api/events', 'cancel']) {
        expect(result.output, path).toContain(`${path} 401`);
      }
      expect(result.output).toContain('guess 403');
    } finally {
      await http.close();
    }
  });

  it("R7.10: the HTTP server's token file and the OAuth token store in the private state cannot be read", async () => {
    const http = await seat().httpServer();
    expect(http.tokenFile, http.stderr()).toBeDefined();
    const tokenFile = http.tokenFile ?? '';
    const store = join(tokenFile, '..', 'mcp_http_token.json');
    await seat().write(store, JSON.stringify({ version: 1, servers: { x: SECRETS.oauth } }), 0o600);
    try {
      const result = await server().sh(
        `cat ${tokenFile} 2>&1; cat ${store} 2>&1; grep -r . ${join(tokenFile, '..')} 2>&1 | head -5`,
      );
      expectNoSecret(result.output);
      expect(result.output).not.toContain(http.token ?? 'no token');
      expect(result.output).toContain(`${tokenFile}: Permission denied`);
      expect(result.output).toContain(`${store}: Permission denied`);
    } finally {
      await http.close();
    }
  });
});
