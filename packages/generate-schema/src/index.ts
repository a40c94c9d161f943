// Library entry of @ahma/generate-schema, for tests and embedding.
export { runGenerateSchema, schemaFiles, type Output, type RunOptions } from './run.js';
