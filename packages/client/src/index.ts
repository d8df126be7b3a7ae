export {
  AlgohostClient,
  AlgorithmsApi,
  BuildsApi,
  DataApi,
  EnvironmentsApi,
  EventsApi,
  KeysApi,
  OrganizationsApi,
  ScmsApi,
  UsersApi,
  VersionsApi,
  encodeCallInput,
} from './client.js';
export { AlgohostError, AlgorithmError } from './errors.js';
export { Transport, collect, paginate, type ClientOptions, type ProgressListener, type Query, type SendOptions } from './transport.js';
export {
  parseAlgorithmRef,
  parseDataUri,
  formatDataUri,
  dataApiPath,
  splitDataUri,
  joinDataUri,
  type AlgorithmRef,
  type DataRef,
} from './refs.js';
export { decodeBase64, encodeBase64, utf8OrUndefined } from './encoding.js';
export { readServerSentEvents, type ServerSentEvent } from './sse.js';
export type * from './types.js';
export type { paths, components, operations } from './generated/openapi.js';
