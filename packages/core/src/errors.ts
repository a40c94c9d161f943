// Errors core raises for bad input: a stable code for programs and an actionable message for people
// (and, through the server, for the agent).

export type AhmaErrorCode =
  | 'PATH_OUTSIDE_SCOPE'
  | 'PATH_INVALID'
  | 'WORKING_DIRECTORY_INVALID'
  | 'FILE_ARG_FAILED'
  | 'SCOPE_INVALID'
  | 'SANDBOX_UNAVAILABLE'
  | 'STATE_DIR_UNSAFE'
  | 'INSTALL_UNSAFE'
  | 'ARGV_INVALID'
  | 'SEQUENCE_INVALID'
  | 'OPERATION_UNKNOWN';

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
