// @ts-check
/**
 * Talking to Quarry's API: the access token (kept in the browser, sent as a header, never in a
 * URL) and one request function that turns the API's error shape into an ApiError.
 */

const TOKEN_KEY = 'quarry.token';

/** The token kept by an earlier sign-in, if any (this tab's first, then the browser's). */
export function storedToken() {
  return sessionStorage.getItem(TOKEN_KEY) ?? localStorage.getItem(TOKEN_KEY) ?? undefined;
}

/**
 * @param {string} token
 * @param {boolean} remember true: localStorage (survives the browser); false: this tab only.
 */
export function storeToken(token, remember) {
  forgetToken();
  (remember ? localStorage : sessionStorage).setItem(TOKEN_KEY, token);
}

export function forgetToken() {
  sessionStorage.removeItem(TOKEN_KEY);
  localStorage.removeItem(TOKEN_KEY);
}

/** An error answer of the API: `{"error": {"message", "code", "status", "fields"?}}`. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} code
   * @param {string} message
   * @param {Record<string, string[]>} [fields]
   */
  constructor(status, code, message, fields) {
    super(message);
    this.status = status;
    this.code = code;
    this.fields = fields;
  }
}

/**
 * @typedef {{ body: any, headers: Headers, ms: number }} ApiAnswer
 */

/**
 * @param {string} token
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<ApiAnswer>}
 */
export async function api(token, method, path, body) {
  /** @type {Record<string, string>} */
  const headers = { authorization: `Bearer ${token}`, accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const started = performance.now();
  let res;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch {
    throw new ApiError(0, 'NETWORK', 'Quarry did not answer: is the service running?');
  }
  const text = await res.text();
  const ms = performance.now() - started;
  let parsed = null;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    const e = parsed?.error;
    if (e && typeof e.message === 'string') {
      throw new ApiError(res.status, String(e.code ?? 'ERROR'), e.message, e.fields);
    }
    throw new ApiError(res.status, 'HTTP_ERROR', `HTTP ${res.status} ${res.statusText}`.trim());
  }
  return { body: parsed, headers: res.headers, ms };
}
