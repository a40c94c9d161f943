// Errors core raises for bad input: a stable code for programs and an actionable message for people
// (and, through the server, for the agent).

/** Every code an AhmaError carries; each is described in one line in docs/requirements.md. */
export const AHMA_ERROR_CODES = [
  'PATH_OUTSIDE_SCOPE',
  'PATH_INVALID',
  'WORKING_DIRECTORY_INVALID',
  'FILE_ARG_FAILED',
  'SCOPE_INVALID',
  'SANDBOX_UNAVAILABLE',
  'STATE_DIR_UNSAFE',
  'INSTALL_UNSAFE',
  'ARGV_INVALID',
  'ARGUMENTS_INVALID',
  'SEQUENCE_INVALID',
  'OPERATION_UNKNOWN',
  'OUTPUT_UNAVAILABLE',
  'PATTERN_REFUSED',
  'TOOL_FILE_UNREADABLE',
  'COMMAND_INVALID',
  'COMMAND_EXISTS',
  'COMMAND_UNKNOWN',
  'EXEC_NOT_FOUND',
  'REGISTRY_WRITE_FAILED',
  'REGISTRY_UNSAFE',
  'CONFIG_INVALID',
] as const;

export type AhmaErrorCode = (typeof AHMA_ERROR_CODES)[number];

export class AhmaError extends Error {
  constructor(
    readonly code: AhmaErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'AhmaError';
  }
}
