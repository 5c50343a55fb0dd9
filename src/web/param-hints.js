// @ts-check
/**
 * Controls for the seeded endpoints' parameters, which are untyped on the server (Supabase Studio
 * sends them as strings, and typing them there would change what the API accepts: Studio's
 * `1hr` or `7day` intervals, an empty timestamp). The explorer only offers a better control; what
 * it sends is the same text a person could type, bound as a string as before.
 */

/** @typedef {import('./params.js').ParamSpec} ParamSpec */

/** Studio's time bounds, in every logs.all-like endpoint: a date-time control each. */
const TIME_BOUNDS = /** @type {Record<string, ParamSpec>} */ ({
  iso_timestamp_start: { name: 'iso_timestamp_start', type: 'timestamp', description: 'Rows after this instant (your time zone)' },
  iso_timestamp_end: { name: 'iso_timestamp_end', type: 'timestamp', description: 'Rows up to this instant (your time zone)' },
});

/** Per seeded endpoint name: its parameters' controls. */
const BY_ENDPOINT = /** @type {Record<string, Record<string, ParamSpec>>} */ ({
  'usage.api-counts': {
    interval: {
      name: 'interval',
      type: 'enum',
      values: ['minutely', 'hourly', 'daily'],
      default: 'minutely',
      description: 'minutely: the last hour by minute · hourly: the last hour · daily: the last 7 days by day',
    },
  },
});

/**
 * The control to offer for an untyped parameter of `endpointName`, if the explorer knows better
 * than a text box. Marked `hint` so it is never saved as the parameter's type.
 * @param {string} endpointName
 * @param {string} param
 * @returns {ParamSpec & { hint: true } | undefined}
 */
export function paramHint(endpointName, param) {
  const spec = BY_ENDPOINT[endpointName]?.[param] ?? TIME_BOUNDS[param];
  return spec ? { ...spec, hint: true } : undefined;
}
