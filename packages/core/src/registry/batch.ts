// batch_exec (FR4.6, EC6), in instant-mcp's shape `{commands: [{operation, params}], atomic}`:
// the operations apply in order, each seeing the ones before it. Atomic (the default): the first
// failure drops them all; otherwise every operation that succeeds is kept. Either way the registry
// file is written once.
import { AhmaError } from '../errors.js';
import { isObject } from './command.js';
import type { RegistryDraft } from './draft.js';

export const BATCH_OPERATIONS = ['add_command', 'remove_command', 'update_command'] as const;
export type BatchOperationName = (typeof BATCH_OPERATIONS)[number];

export interface BatchOperationResult {
  readonly index: number;
  readonly operation: string;
  readonly name?: string;
  readonly success: boolean;
  readonly error?: { readonly code: string; readonly message: string };
}

export interface BatchOutcome {
  /** Every operation succeeded (and, atomic, was kept). */
  readonly success: boolean;
  readonly atomic: boolean;
  /** Atomic and failed: nothing was kept. */
  readonly rolledBack: boolean;
  /** One per operation run; an atomic batch stops at its first failure. */
  readonly results: readonly BatchOperationResult[];
}

export async function runBatch(
  draft: RegistryDraft,
  operations: readonly unknown[],
  atomic: boolean,
): Promise<BatchOutcome> {
  const results: BatchOperationResult[] = [];
  for (const [index, raw] of operations.entries()) {
    const operation = isObject(raw) ? raw['operation'] : undefined;
    const params = isObject(raw) ? raw['params'] : undefined;
    const name =
      isObject(params) && typeof params['name'] === 'string' ? params['name'] : undefined;
    const label = typeof operation === 'string' ? operation : String(operation);
    try {
      await apply(draft, operation, params);
      results.push({
        index,
        operation: label,
        ...(name === undefined ? {} : { name }),
        success: true,
      });
    } catch (error) {
      if (!(error instanceof AhmaError)) throw error;
      results.push({
        index,
        operation: label,
        ...(name === undefined ? {} : { name }),
        success: false,
        error: { code: error.code, message: error.message },
      });
      if (atomic) {
        draft.discard();
        return { success: false, atomic, rolledBack: true, results };
      }
    }
  }
  return { success: results.every((result) => result.success), atomic, rolledBack: false, results };
}

async function apply(draft: RegistryDraft, operation: unknown, params: unknown): Promise<void> {
  if (!isObject(params)) {
    throw new AhmaError('COMMAND_INVALID', "params is an object: the operation's arguments");
  }
  switch (operation) {
    case 'add_command':
      await draft.add(params);
      return;
    case 'update_command':
      await draft.update(params);
      return;
    case 'remove_command':
      draft.remove(params);
      return;
    default:
      throw new AhmaError(
        'COMMAND_INVALID',
        `operation ${JSON.stringify(operation)} is not one of ${BATCH_OPERATIONS.join(', ')}`,
      );
  }
}
