// The AhmaError a refused operation rejects with: the one check core's tests share for "refused,
// with this code, saying this".
import { expect } from 'vitest';
import { AhmaError, type AhmaErrorCode } from '../../src/errors.js';

/**
 * The AhmaError `promise` rejects with; the test fails if it resolves, rejects otherwise, has
 * another code than `code` (when given), or a message without each of `fragments`.
 */
export async function refusal(
  promise: Promise<unknown>,
  code?: AhmaErrorCode,
  ...fragments: string[]
): Promise<AhmaError> {
  const error: unknown = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AhmaError);
  const ahma = error as AhmaError;
  if (code !== undefined) expect(ahma.code, ahma.message).toBe(code);
  for (const fragment of fragments) expect(ahma.message).toContain(fragment);
  return ahma;
}
