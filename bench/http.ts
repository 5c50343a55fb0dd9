/**
 * A lean keep-alive HTTP client for the query half of the benchmark (lighter than fetch, so the
 * client steals less CPU from the service on a 2-core machine).
 */
import http from 'node:http';

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export function request(agent: http.Agent, method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: string): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const all: Record<string, string | number> = { ...headers };
    if (body !== undefined) {
      all['content-type'] = 'application/json';
      all['content-length'] = Buffer.byteLength(body);
    }
    const req = http.request(url, { method, agent, headers: all }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Reads `{"error":{"message"}}` out of an error answer for a readable note. */
export function errorMessage(answer: HttpAnswer): string {
  try {
    const parsed = JSON.parse(answer.body) as { error?: { message?: string } | string; message?: string };
    const e = parsed.error;
    const text = typeof e === 'string' ? e : (e?.message ?? parsed.message);
    return `HTTP ${answer.status}: ${text ?? answer.body.slice(0, 200)}`;
  } catch {
    return `HTTP ${answer.status}: ${answer.body.slice(0, 200)}`;
  }
}
