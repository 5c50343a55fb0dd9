/**
 * `/browser/reports` (browsers' own reports; Logflare's Logs.BrowserReport): a CSP violation
 * (`application/csp-report`, `{"csp-report": {…}}`) or Reporting API reports
 * (`application/reports+json`, an array of `{type, age, url, user_agent, body}`). Each report is
 * kept whole under `metadata`, its JSON text the event message. Both Content-Types are read as JSON,
 * as Logflare reads them.
 */
import { type IntegrationRequest, type RawEvent, bodyObjects } from './shared.ts';

export function browserReportEvents(req: IntegrationRequest): RawEvent[] {
  return bodyObjects(req).map((report) => ({ event_message: JSON.stringify(report), metadata: report }));
}
