import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { isUtf8Charset, parseMediaType } from '../wire/mediaType.js';

/** Why a request to an MCP endpoint is refused before its body is read, and how to answer it. */
export interface FramingRefusal {
  readonly status: number;
  readonly message: string;
  readonly headers?: OutgoingHttpHeaders;
}

/** The methods an MCP endpoint serves (Streamable HTTP): POST carries messages, GET a stream, DELETE ends a session. */
export const MCP_METHODS = 'GET, POST, DELETE';

/**
 * True when the request has a body: any Transfer-Encoding, or a Content-Length other than 0. Both
 * are read whatever the Connection header names: a body left unread on a keep-alive connection
 * would be read as the next request.
 */
function hasRequestBody(req: IncomingMessage): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length.trim() !== '0';
}

/**
 * Checks the framing of a request to an MCP endpoint before anything of it is read or forwarded:
 * POST carries JSON in UTF-8 (any other media type or charset is 415: the gateway reads UTF-8 and
 * an upstream honouring another charset would read other messages); GET and DELETE carry no body
 * (400); any other method is 405. Undefined when the request may proceed.
 */
export function checkRequestFraming(req: IncomingMessage): FramingRefusal | undefined {
  const method = req.method ?? '';
  if (method === 'POST') {
    const type = parseMediaType(req.headers['content-type']);
    if (type?.type !== 'application/json')
      return {
        status: 415,
        message: 'Unsupported Media Type: a POST to an MCP endpoint carries application/json',
      };
    if (!isUtf8Charset(type))
      return {
        status: 415,
        message: `Unsupported Media Type: charset "${type.parameters['charset']}" (only UTF-8 is read)`,
      };
    return undefined;
  }
  if (method === 'GET' || method === 'DELETE') {
    if (!hasRequestBody(req)) return undefined;
    // The body is never read: the connection ends with the answer, so nothing of it is taken for a request.
    return {
      status: 400,
      message: `Bad Request: a ${method} to an MCP endpoint has no body`,
      headers: { connection: 'close' },
    };
  }
  return {
    status: 405,
    message: `Method Not Allowed: an MCP endpoint serves ${MCP_METHODS}`,
    headers: { allow: MCP_METHODS },
  };
}
