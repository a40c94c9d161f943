// `ahma-shell grants list|revoke` (R7.18): the lasting grants people gave ("always" answers: a
// host commands may reach, a directory they may write), read from the ledger in Ahma's private
// state — the same place the server keeps it (--state-dir, AHMA_STATE_DIR, else the first of
// $XDG_STATE_HOME/ahma, ~/.local/state/ahma and $XDG_RUNTIME_DIR/ahma that exists). A revoked grant stops working when a server next starts;
// running servers keep what they loaded (restart them to drop it at once).
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { AhmaError, GrantLedger, stateRootCandidates, type LedgerGrant } from '@ahma/core';
import type { Environment } from '../runtime/runtime.js';

export const GRANTS_USAGE = `Usage:
  ahma-shell grants list [--json] [--state-dir DIR]
  ahma-shell grants revoke ID... [--state-dir DIR]

The grants a person gave when Ahma asked "always": a host:port one project's commands may
reach, or a directory they may write, with who answered, when and why. revoke removes them from the ledger; servers
running now keep them until they restart.
`;

export interface GrantsOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

export async function grantsCommand(
  argv: readonly string[],
  env: Environment,
  out: GrantsOutput,
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: true,
      options: {
        json: { type: 'boolean' },
        'state-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    return usage(out, error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    out.stdout(GRANTS_USAGE);
    return 0;
  }
  const [action, ...ids] = positionals;
  const root = stateRootCandidates(values['state-dir'] ?? env['AHMA_STATE_DIR'], env).find(
    (candidate) => existsSync(candidate),
  );
  const ledger = root === undefined ? undefined : new GrantLedger(root);
  try {
    switch (action) {
      case 'list': {
        if (ids.length > 0) return usage(out, 'grants list takes no ids');
        const grants = (await ledger?.list()) ?? [];
        out.stdout(
          values.json === true ? `${JSON.stringify(grants, undefined, 2)}\n` : table(grants),
        );
        return 0;
      }
      case 'revoke': {
        if (ids.length === 0) return usage(out, 'grants revoke needs the ids to remove');
        const removed = (await ledger?.revoke(ids)) ?? [];
        for (const grant of removed) {
          out.stdout(`revoked ${grant.id}: ${describe(grant)} for ${grant.scope}\n`);
        }
        const unknown = ids.filter((id) => !removed.some((grant) => grant.id === id));
        for (const id of unknown) out.stderr(`ahma-shell grants: no grant ${id}\n`);
        return unknown.length === 0 ? 0 : 1;
      }
      default:
        return usage(
          out,
          action === undefined ? 'say list or revoke' : `unknown action "${action}"`,
        );
    }
  } catch (error) {
    if (!(error instanceof AhmaError)) throw error;
    out.stderr(`ahma-shell grants: ${error.message}\n`);
    return 1;
  }
}

function table(grants: readonly LedgerGrant[]): string {
  if (grants.length === 0) return 'no grants\n';
  return grants
    .map(
      (grant) =>
        `${grant.id}  ${describe(grant)}\n  scope: ${grant.scope}\n  who:   ${grant.who}\n  when:  ${grant.when}\n  why:   ${grant.why}\n`,
    )
    .join('');
}

function describe(grant: LedgerGrant): string {
  return grant.kind === 'host' ? `reach ${grant.rule}` : `write ${grant.rule}`;
}

function usage(out: GrantsOutput, error: string): number {
  out.stderr(`ahma-shell grants: ${error}\n\n${GRANTS_USAGE}`);
  return 2;
}
