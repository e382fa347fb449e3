/**
 * The contract's error body: `{"error": {"status", "code", "message", "details"?}}`.
 * Handlers throw an {@link ApiError}; the server turns it into the response.
 */

export interface ErrorDetail {
  field: string;
  message: string;
}

export interface ErrorBody {
  error: {
    status: number;
    code: string;
    message: string;
    details?: ErrorDetail[];
  };
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: ErrorDetail[],
    /** Extra response headers, e.g. `WWW-Authenticate` or `Retry-After`. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toBody(): ErrorBody {
    const error: ErrorBody['error'] = { status: this.status, code: this.code, message: this.message };
    if (this.details) error.details = this.details;
    return { error };
  }
}

export const notFound = (code: string, message: string): ApiError => new ApiError(404, code, message);

export const invalidParameter = (field: string, message: string): ApiError =>
  new ApiError(400, 'invalid_parameter', `${field}: ${message}`, [{ field, message }]);

export const unavailable = (message: string): ApiError => new ApiError(503, 'unavailable', message);
