// Ahma as an MCP client of remote HTTP servers (SPEC §10, R14): OAuth 2.1 authorization code +
// PKCE through the MCP SDK, the token file, and the localhost callback.
export { openBrowser } from './browser.js';
export { ACCEPT_ANY_OUTPUT, messageOf, oneLine } from './client-support.js';
export {
  AuthorizationFailed,
  CALLBACK_PATH,
  CallbackListener,
  DEFAULT_CALLBACK_PORT,
} from './callback.js';
export { connectHttp, type HttpConnectOptions, type HttpConnection } from './connect.js';
export { AhmaOAuthProvider, type ProviderOptions } from './oauth-provider.js';
export {
  privateFileProblem,
  readPrivateFile,
  type PrivateFileProblem,
  type PrivateRead,
} from './private-file.js';
export {
  TOKEN_FILE_NAME,
  TOKEN_PATH_VARIABLE,
  TokenFileError,
  TokenStore,
  defaultTokenPath,
  serverKey,
  type ServerCredentials,
} from './token-store.js';
