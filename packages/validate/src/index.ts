// Library entry of @ahma/validate, for tests and embedding.
export {
  runValidate,
  EXIT_VALID,
  EXIT_INVALID,
  EXIT_USAGE,
  EXIT_UNAVAILABLE,
  type Output,
  type RunOptions,
} from './run.js';
