/**
 * The answers the HTTP layer gives before any route runs, as the contract's errors: a request
 * Node's parser cannot read, one that took too long to arrive, an expectation other than
 * `100-continue`, an HTTP/1.1 request without `Host`, and CONNECT.
 */
import http from 'node:http';
import { ApiError } from './errors.js';

/** What the parser's errors say is wrong, and how to send it right (RFC 9110 for fields, RFC 9112 for framing). */
const MALFORMED: Readonly<Record<string, string>> = {
  HPE_INVALID_METHOD: 'The method is not one HTTP defines; this API answers GET, HEAD, POST, PATCH and DELETE',
  HPE_INVALID_URL: 'The request target is malformed; percent-encode spaces and control characters in it',
  HPE_INVALID_CONSTANT:
    'The request line must be "METHOD /path HTTP/1.1", with single spaces and a percent-encoded path',
  HPE_INVALID_VERSION: 'The HTTP version is malformed or unsupported; send HTTP/1.1',
  HPE_INVALID_HEADER_TOKEN:
    'A header is malformed; a header name is a token (no spaces), its value visible text, each line ending in CRLF',
  HPE_INVALID_CONTENT_LENGTH: 'Frame the body with one Content-Length (a decimal number) or Transfer-Encoding: chunked',
  HPE_UNEXPECTED_CONTENT_LENGTH:
    'Frame the body with one Content-Length (a decimal number) or Transfer-Encoding: chunked',
  HPE_INVALID_TRANSFER_ENCODING: 'Transfer-Encoding must end with chunked (RFC 9112 §6.3)',
  HPE_INVALID_CHUNK_SIZE: 'A chunk size of the chunked body is malformed; it must be a hexadecimal number',
  HPE_INVALID_EOF_STATE: 'The connection was closed before the request was complete; send the whole request',
  HPE_PAUSED_H2_UPGRADE: 'This server speaks HTTP/1.1 only; send HTTP/1.1, not the HTTP/2 preface',
};

function seconds(milliseconds: number): string {
  return `${milliseconds / 1000} s`;
}

/**
 * The contract's error for an error Node reports on a connection (its `clientError` event), or
 * undefined when there is nobody to answer (the connection failed: reset, broken pipe).
 * `bodyPending` says that the request's head was read and its body was still arriving, which
 * tells which timeout ran out.
 */
export function protocolError(
  error: NodeJS.ErrnoException & { reason?: unknown },
  timeouts: { headers: number; request: number },
  bodyPending: boolean,
): ApiError | undefined {
  const { code = '' } = error;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new ApiError(
      408,
      'request_timeout',
      bodyPending
        ? `The request body did not arrive within ${seconds(timeouts.request)} of the request's start; send it without pausing`
        : `The request headers did not arrive within ${seconds(timeouts.headers)}; send them without pausing`,
    );
  }
  if (!code.startsWith('HPE_')) return undefined;
  if (code === 'HPE_HEADER_OVERFLOW') {
    return new ApiError(
      431,
      'headers_too_large',
      `The request headers (or the trailers of a chunked body) are over ${http.maxHeaderSize} bytes; send fewer or shorter ones`,
    );
  }
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') {
    return new ApiError(
      413,
      'payload_too_large',
      'The chunk extensions of the body are larger than the server accepts; send the body without chunk extensions',
    );
  }
  // The parser's reasons are fixed texts ("Invalid header value char"), never bytes of the request.
  const reason = typeof error.reason === 'string' ? error.reason : 'unreadable request';
  const advice = MALFORMED[code] ?? 'Send a request as RFC 9112 describes';
  return new ApiError(400, 'parse_error', `Malformed HTTP request (${reason}). ${advice}`);
}

export function expectationFailed(): ApiError {
  return new ApiError(
    417,
    'expectation_failed',
    'The Expect header asks for something other than 100-continue, the only expectation this server meets; drop the header',
  );
}

export function missingHost(): ApiError {
  return new ApiError(400, 'parse_error', 'An HTTP/1.1 request must carry a Host header (RFC 9112 §3.2); add one');
}

export function connectNotImplemented(): ApiError {
  return new ApiError(
    501,
    'not_implemented',
    'CONNECT is not implemented: this server is an API, not a proxy; send GET, HEAD, POST, PATCH or DELETE',
  );
}
