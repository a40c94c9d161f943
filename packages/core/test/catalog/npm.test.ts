// The npm catalog run for real in the sandbox, offline: a package created with npm_init, edited with
// npm_pkg_set, its scripts run with arguments through "--", a local dependency installed (R2.5).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  catalog,
  catalogRunner,
  expectSuccess,
  installed,
  type Catalog,
  type CatalogRunner,
} from './helpers.js';

/** A script that prints the arguments it received as JSON. */
const ECHO_ARGS = 'node -e "console.log(JSON.stringify(process.argv.slice(1)))"';

interface PackageJson {
  readonly name?: string;
  readonly version?: string;
  readonly scripts?: Record<string, string>;
  readonly dependencies?: Record<string, string>;
}

/** The command's own output: npm's configuration warnings (this machine's, not ours) removed. */
function withoutWarnings(output: string): string {
  return output
    .split('\n')
    .filter((line) => !line.startsWith('npm warn'))
    .join('\n')
    .trim();
}

let loaded: Catalog;
let runner: CatalogRunner;
let count = 0;

async function readPackage(dir: string): Promise<PackageJson> {
  return JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as PackageJson;
}

/** A new package directory initialised with npm_init; returns its path and call location. */
async function newPackage(): Promise<{ dir: string; at: { working_directory: string } }> {
  const name = `pkg-${String(++count)}`;
  await mkdir(join(runner.scope, name));
  const at = { working_directory: name };
  expectSuccess(await runner.call('npm_init', at));
  return { dir: join(runner.scope, name), at };
}

describe.skipIf(!installed('npm'))('npm, run for real in the sandbox (offline)', () => {
  beforeAll(async () => {
    loaded = await catalog(['npm']);
    runner = await catalogRunner(loaded, {
      ...process.env,
      // No registry traffic: every call here must work without the network.
      npm_config_offline: 'true',
      // Nor the user's npm configuration.
      npm_config_userconfig: '/dev/null',
      npm_config_nodedir: undefined,
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    });
  });
  afterAll(async () => {
    await runner.dispose();
  });

  it('R2.5: npm_init (yes by default) writes package.json before the call returns', async () => {
    const { dir } = await newPackage();
    expect(await readPackage(dir)).toMatchObject({
      name: `pkg-${String(count)}`,
      version: '1.0.0',
    });
  });

  it('R1.1: npm_pkg_set and npm_pkg_get edit and read package.json fields', async () => {
    const { dir, at } = await newPackage();
    expectSuccess(
      await runner.call('npm_pkg_set', {
        assignments: [`scripts.echo=${ECHO_ARGS}`, 'description=has "quotes" and $(id)'],
        ...at,
      }),
    );
    const manifest = await readPackage(dir);
    expect(manifest.scripts?.['echo']).toBe(ECHO_ARGS);
    const got = expectSuccess(await runner.call('npm_pkg_get', { keys: ['description'], ...at }));
    expect(JSON.parse(withoutWarnings(got))).toBe('has "quotes" and $(id)');
  });

  it('SPEC §2: npm_run passes args to the script after "--", each exactly as given', async () => {
    const { at } = await newPackage();
    expectSuccess(
      await runner.call('npm_pkg_set', { assignments: [`scripts.echo=${ECHO_ARGS}`], ...at }),
    );
    const args = ['plain', '--flag', 'two words', '$(id)', "it's"];
    const output = expectSuccess(await runner.call('npm_run', { script: 'echo', args, ...at }));
    const printed = withoutWarnings(output).split('\n').at(-1) ?? '';
    expect(JSON.parse(printed)).toEqual(args);
  });

  it('SPEC §3: npm_test runs the test script and reports its failure as a failed result', async () => {
    const { at } = await newPackage();
    expectSuccess(
      await runner.call('npm_pkg_set', {
        assignments: ['scripts.test=node -e "process.exit(process.argv[1] === \'pass\' ? 0 : 3)"'],
        ...at,
      }),
    );
    expectSuccess(await runner.call('npm_test', { args: ['pass'], ...at }));
    const failed = await runner.call('npm_test', at);
    expect(failed.status).toBe('failed');
    expect(failed.exitCode).not.toBe(0);
  });

  it('R2.5: npm_install of a local package records it in package.json before returning; npm_ls lists it', async () => {
    const { dir, at } = await newPackage();
    await mkdir(join(dir, 'local-dep'));
    await writeFile(
      join(dir, 'local-dep', 'package.json'),
      JSON.stringify({ name: 'local-dep', version: '0.1.0' }),
    );
    expectSuccess(await runner.call('npm_install', { packages: ['./local-dep'], ...at }));
    expect((await readPackage(dir)).dependencies).toEqual({ 'local-dep': 'file:local-dep' });
    expect(expectSuccess(await runner.call('npm_ls', at))).toContain('local-dep@0.1.0');

    expectSuccess(await runner.call('npm_uninstall', { packages: ['local-dep'], ...at }));
    expect((await readPackage(dir)).dependencies ?? {}).toEqual({});
  });

  it('R2.5: npm_version bumps the version in package.json', async () => {
    const { dir, at } = await newPackage();
    const output = expectSuccess(
      await runner.call('npm_version', { newversion: 'minor', 'no-git-tag-version': true, ...at }),
    );
    expect(withoutWarnings(output).split('\n').at(-1)).toBe('v1.1.0');
    expect((await readPackage(dir)).version).toBe('1.1.0');
  });
});
