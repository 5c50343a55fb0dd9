/**
 * Errors as typed values with stable codes. Every error that reaches an HTTP response is a
 * QuarryError; anything else is reported as INTERNAL without its details.
 */
/**
 * Every stable code with its default HTTP status: the one list of codes (docs/API.md §4's error
 * table lists each, with this status; test/docs/settings-and-codes.test.ts checks it).
 */
const defaultStatus = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_FAILED: 422,
  PARSE_ERROR: 400,
  QUERY_NOT_ALLOWED: 400,
  INVALID_QUERY: 400,
  QUERY_TOO_COMPLEX: 400,
  QUERY_TIMEOUT: 504,
  REQUEST_TIMEOUT: 408,
  RESULT_TOO_LARGE: 400,
  OVERLOADED: 503,
  UNAVAILABLE: 503,
  INSUFFICIENT_STORAGE: 507,
  INTERNAL: 500,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof defaultStatus;

/** Every code, in the order above. */
export const errorCodes = Object.keys(defaultStatus) as ErrorCode[];

/** The status a code is answered with unless its error says otherwise. */
export function statusOf(code: ErrorCode): number {
  return defaultStatus[code];
}

export interface QuarryErrorOptions {
  status?: number;
  /** Per-field messages, for VALIDATION_FAILED. */
  fields?: Record<string, string[]>;
  /** Seconds, sent as Retry-After (OVERLOADED). */
  retryAfter?: number;
  cause?: unknown;
}

export class QuarryError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly fields?: Record<string, string[]>;
  readonly retryAfter?: number;

  constructor(code: ErrorCode, message: string, options: QuarryErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'QuarryError';
    this.code = code;
    this.status = options.status ?? defaultStatus[code];
    if (options.fields) this.fields = options.fields;
    if (options.retryAfter !== undefined) this.retryAfter = options.retryAfter;
  }
}

export function isQuarryError(e: unknown): e is QuarryError {
  return e instanceof QuarryError;
}

/** The JSON body of every error response (docs/API.md §4). */
export interface ErrorBody {
  error: { message: string; code: ErrorCode; status: number; fields?: Record<string, string[]> };
}

export function errorBody(e: QuarryError): ErrorBody {
  const body: ErrorBody = { error: { message: e.message, code: e.code, status: e.status } };
  if (e.fields) body.error.fields = e.fields;
  return body;
}
