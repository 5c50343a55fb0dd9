/**
 * One error shape for every response (docs/API.md §4):
 * `{"error": {"message", "code", "status"}}`, never a stack trace, SQL text or file path.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { QuarryError, errorBody, isQuarryError } from '../errors.ts';
import { diskFullError, isDiskFull } from '../storage/disk-full.ts';

function fromFastify(e: FastifyError): QuarryError | undefined {
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new QuarryError('PAYLOAD_TOO_LARGE', 'The request body is larger than the limit.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new QuarryError('UNSUPPORTED_MEDIA_TYPE', 'Unsupported Content-Type: send application/json.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new QuarryError('BAD_REQUEST', 'The request body is empty but Content-Type is application/json.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new QuarryError('BAD_REQUEST', 'The request body is not valid JSON.');
    case 'FST_ERR_VALIDATION':
      return new QuarryError('BAD_REQUEST', `Invalid request: ${e.message}`);
  }
  if (e.statusCode === 400 && e instanceof SyntaxError) {
    return new QuarryError('BAD_REQUEST', 'The request body is not valid JSON.');
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new QuarryError('BAD_REQUEST', e.message, { status: e.statusCode });
  }
  return undefined;
}

export function toQuarryError(error: unknown): QuarryError {
  if (isQuarryError(error)) return error;
  if (isDiskFull(error)) return diskFullError(error);
  if (error && typeof error === 'object' && 'code' in error) {
    const mapped = fromFastify(error as FastifyError);
    if (mapped) return mapped;
  }
  return new QuarryError('INTERNAL', 'Something went wrong on our side; the error has been logged.');
}

export function sendError(reply: FastifyReply, error: QuarryError): FastifyReply {
  if (error.retryAfter !== undefined) reply.header('Retry-After', String(error.retryAfter));
  return reply.code(error.status).type('application/json; charset=utf-8').send(errorBody(error));
}

export function errorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const e = toQuarryError(error);
  if (e.code === 'INTERNAL') {
    request.log.error({ err: error, path: request.routeOptions.url }, 'request failed unexpectedly');
  }
  return sendError(reply, e);
}
