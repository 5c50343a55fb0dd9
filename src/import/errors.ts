/**
 * Why `npm run import-logflare` stopped, as a typed value with a stable code. The message speaks to
 * the person running it: what went wrong, and what to do about it. The script prints it and exits
 * non-zero; nothing in it quotes a password.
 */
export type ImportProblem =
  /** The command line or an environment value is not usable (exit status 2). */
  | 'BAD_ARGUMENTS'
  /** No Quarry access token was given or found. */
  | 'NO_TOKEN'
  /** PostgreSQL could not be reached (refused, unknown host, timeout). */
  | 'POSTGRES_UNREACHABLE'
  /** PostgreSQL refused the user or password. */
  | 'POSTGRES_AUTH'
  /** The database named in the URL does not exist. */
  | 'POSTGRES_NO_DATABASE'
  /** Any other PostgreSQL error while reading. */
  | 'POSTGRES_ERROR'
  /** The schema (`--schema`, default `_analytics`) does not exist in that database. */
  | 'SCHEMA_NOT_FOUND'
  /** The schema exists but holds no Logflare `sources` table. */
  | 'NOT_LOGFLARE'
  /** `--sources` named a source Logflare does not have. */
  | 'UNKNOWN_SOURCE'
  /** Quarry does not answer at the given URL. */
  | 'QUARRY_UNREACHABLE'
  /** Quarry refused the token (401). */
  | 'QUARRY_UNAUTHORIZED'
  /** The token is valid but not of scope `private` (403). */
  | 'QUARRY_FORBIDDEN'
  /** Quarry has no source of that name (and --create-sources was not given). */
  | 'QUARRY_SOURCE_MISSING'
  /** Quarry answered something the importer cannot go on from. */
  | 'QUARRY_ERROR'
  /** Quarry kept answering "busy" (503/507/429) or kept failing to answer for longer than the retry window. */
  | 'QUARRY_UNAVAILABLE';

export class ImportError extends Error {
  readonly code: ImportProblem;

  constructor(code: ImportProblem, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ImportError';
    this.code = code;
  }
}

export function isImportError(e: unknown): e is ImportError {
  return e instanceof ImportError;
}

/** A connection URL with its password replaced, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '****';
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:****@');
  }
}
