/**
 * BigQuery's rules for INITCAP and NET.HOST, stated once for every engine's translation.
 */

/**
 * INITCAP's word delimiters when none are given: these punctuation characters and every Unicode
 * White_Space character. A character after a delimiter (or first) is upper-cased, any other
 * lower-cased, a delimiter is kept as it is.
 */
export const INITCAP_DELIMITERS =
  '[](){}/|\\<>!?@"#$&~_,.:;*%+-^' +
  '\t\n\u000b\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';

/** The ASCII white space NET.HOST strips from both ends of a URL (RE2 syntax). */
export const NET_HOST_TRIM = '^[\\t\\n\\x0B\\f\\r ]+|[\\t\\n\\x0B\\f\\r ]+$';

/**
 * NET.HOST on a trimmed URL (RE2 syntax; group 1 is the host): after `//`, or after a scheme whose
 * first `:` is followed by `//`, and after the last `@` of the network location (which ends at
 * `/ ? # \`), up to the first `:` that is not inside a leading `[...]`.
 */
export const NET_HOST_PATTERN = '^(?:[/\\\\]{2}|[^:/?#\\\\]*:[/\\\\]{2})?(?:[^/?#\\\\]*@)?((?:\\[[^\\[\\]/?#\\\\]*[\\[\\]]?)?[^:/?#\\\\]*)';

/** Then leading dots go and trailing dots become one; an empty host is NULL. */
export const NET_HOST_LEADING_DOTS = '^\\.+';
export const NET_HOST_TRAILING_DOTS = '\\.+$';
