// The lane one call runs in: the tool's (its file's `concurrency`; `exclusive` when it says
// nothing), or the one the call asks for with the `concurrency` meta-parameter — as long as that
// never gives the command write access its tool does not have. A read_only tool stays read_only;
// an exclusive or service tool's call may run read_only (fewer rights), or in the other lane (the
// same rights; only when it waits for other writers changes).
import { AhmaError } from '../errors.js';
import { LANES, type Lane } from './workspace-lanes.js';

export function callLane(
  tool: string,
  declared: Lane | undefined,
  args: Readonly<Record<string, unknown>>,
): Lane {
  const own = declared ?? 'exclusive';
  const asked = args['concurrency'];
  if (asked === undefined) return own;
  if (typeof asked !== 'string' || !(LANES as readonly string[]).includes(asked)) {
    throw new AhmaError(
      'ARGUMENTS_INVALID',
      `concurrency must be one of ${LANES.map((lane) => `"${lane}"`).join(', ')}`,
    );
  }
  const lane = asked as Lane;
  if (own === 'read_only' && lane !== 'read_only') {
    throw new AhmaError(
      'ARGUMENTS_INVALID',
      `${tool} runs read_only (its tool file says so): a call cannot give it write access to the workspace with concurrency "${lane}"`,
    );
  }
  return lane;
}
