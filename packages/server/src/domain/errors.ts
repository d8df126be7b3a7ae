/**
 * Domain errors name a kind; only the HTTP edge (api/errors.ts) maps kinds to status codes.
 * `code` is the numeric error code of the original platform's API (reference/compat.md §1),
 * which existing clients read, so it travels with the error from where it is raised.
 */
export type ErrorKind = 'not_found' | 'conflict' | 'invalid' | 'forbidden' | 'unauthenticated' | 'limit' | 'unavailable' | 'internal';

export const ErrorCodes = {
  algorithmNotFound: 1001,
  algorithmExists: 1002,
  nothingToPublish: 1007,
  buildNotFound: 1010,
  buildLogsNotFound: 1011,
  notAuthorized: 2001,
  invalidApiKey: 2002,
  malformedJson: 2013,
  invalidRequest: 2015,
  userNotFound: 3000,
  usernameTaken: 3003,
  emailTaken: 3004,
  organizationNotFound: 3100,
  organizationExists: 3101,
  // Ours: the platform has no invitations (compat §6 adds members directly).
  invitationNotFound: 3102,
  unknownLanguage: 4001,
  internal: 5001,
  invalidMarker: 5002,
  invalidLimit: 5003,
  validation: 6001,
  // Hosted data: the platform's own codes are not known (compat §5 names none); clients read
  // the status and X-Error-Message.
  dataNotFound: 7001,
  dataExists: 7002,
  dataQuota: 7003,
} as const;

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: number,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const notFound = (code: number, message: string) => new DomainError('not_found', code, message);
export const conflict = (code: number, message: string) => new DomainError('conflict', code, message);
export const invalid = (message: string, code: number = ErrorCodes.validation) => new DomainError('invalid', code, message);
export const forbidden = (message: string) => new DomainError('forbidden', ErrorCodes.notAuthorized, message);
export const unauthenticated = (message: string) => new DomainError('unauthenticated', ErrorCodes.invalidApiKey, message);
