/** The access tokens test services start with (LOGFLARE_PRIVATE_ACCESS_TOKEN / LOGFLARE_PUBLIC_ACCESS_TOKEN). */
export const PRIVATE_TOKEN = 'test-private-token-0123456789';
export const PUBLIC_TOKEN = 'test-public-token-0123456789';
