// @ts-check
/**
 * LQL in the explorer: examples that run as typed on the chosen endpoint, and a default `f:` when
 * the query names no CTE (the API refuses LQL without one when there are several, as Logflare does).
 */

const FROM = /(^|\s)-?(f|from):\S/;

/**
 * Examples for an endpoint whose CTEs are `ctes`, each a complete query.
 * @param {string[]} ctes
 * @returns {string[]}
 */
export function lqlExamples(ctes) {
  if (ctes.includes('edge_logs')) {
    return ['f:edge_logs m.response.status_code:>=500', 'f:edge_logs c:count(*) c:group_by(t::minute)', 'f:edge_logs t:last@1h'];
  }
  const first = ctes[0];
  if (first === undefined) return ['c:count(*) c:group_by(t::minute)'];
  return [`f:${first}`, `f:${first} c:count(*) c:group_by(t::minute)`];
}

/**
 * The query to send: `text` as written when it names a CTE or there is at most one; else reading
 * the first CTE, with a note saying so and naming the others.
 * @param {string} text
 * @param {string[]} ctes
 * @returns {{ text: string, note: string | undefined }}
 */
export function withSource(text, ctes) {
  const first = ctes[0];
  if (FROM.test(text) || first === undefined || ctes.length < 2) return { text, note: undefined };
  const others = ctes.slice(1).join(', ');
  return {
    text: `f:${first} ${text}`.trim(),
    note: `No f: in the query, so it read ${first}, the endpoint's first CTE. For another, add f:name (${others}).`,
  };
}
