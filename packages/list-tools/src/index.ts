// Library entry of @ahma/list-tools, for tests and embedding.
export {
  runListTools,
  EXIT_OK,
  EXIT_FAILED,
  EXIT_USAGE,
  type Output,
  type RunOptions,
} from './run.js';
export {
  listServerTools,
  describeTarget,
  type ListTarget,
  type ServerListing,
  type ListOptions,
} from './connect.js';
export { ListToolsError, type ListToolsErrorCode } from './errors.js';
export { describeParameters, schemaType, type Parameter } from './parameters.js';
