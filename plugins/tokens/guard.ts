/**
 * The tier guards: `Authorization: Token <secret>` on token and staff routes.
 * Missing, malformed, unknown or revoked → 401 `unauthorized` with
 * `WWW-Authenticate: Token`; a live token without approval for the route's
 * endpoint name (or, on staff routes, without the staff flag) → 403 `forbidden`.
 * Public routes need no token, but one presented there is checked all the same.
 */
import {
  ApiError,
  openApiPath,
  type ApiRequest,
  type RouteDefinition,
  type TierGuard,
  type TokenApprovals,
} from '../../lib/sdk.js';
import { TOKEN_PATTERN, grantsCover, type ApiToken, type TokensSlice } from './model.js';

export interface GuardOptions {
  /**
   * Called before a 401 is answered; may throw another ApiError instead (the plugin
   * throttles failed authentications by client IP this way). `revoked` says the header
   * presents a revoked token, whose every use is a 401.
   */
  onUnauthorized?: (request: ApiRequest, refusal: { revoked: boolean }) => void;
  /**
   * Called before a 403 is answered, with `request.tokenId` set; may throw another ApiError
   * instead, or return headers for the 403 (the plugin draws refusals from the token's bucket,
   * so they are throttled too, and says what is left).
   */
  onForbidden?: (request: ApiRequest) => Record<string, string> | void;
}

/** The 401 of a well-formed token that was revoked. */
class RevokedTokenError extends ApiError {}

function unauthorized(message: string, Kind: typeof ApiError = ApiError): ApiError {
  return new Kind(401, 'unauthorized', message, undefined, { 'WWW-Authenticate': 'Token' });
}

const SCHEME = 'Token ';

/** An Authorization header of the Token scheme, with or without credentials. */
const PRESENTS_TOKEN = /^\s*token(?:\s|$)/i;

/** The live token a request presents, or the 401 that explains what is wrong with its header. */
export function authenticate(tokens: TokensSlice, request: ApiRequest): ApiToken | ApiError {
  // A well-formed header of a live token is found without splitting or matching it (this runs on every
  // token request); anything else takes the careful way below, which explains what is wrong.
  const header = request.headers.authorization;
  if (header?.startsWith(SCHEME)) {
    const token = tokens.findBySecret(header.slice(SCHEME.length));
    if (token !== undefined && token.revokedAt === null) return token;
  }
  return explainRefusal(tokens, header?.trim() ?? '');
}

/** The 401 for an Authorization header that does not present a live token (or, after all, the token). */
function explainRefusal(tokens: TokensSlice, header: string): ApiToken | ApiError {
  if (header === '') {
    return unauthorized('Authentication credentials were not provided; send the header "Authorization: Token <token>"');
  }
  const [scheme = '', ...credentials] = header.split(/\s+/);
  if (scheme.toLowerCase() !== 'token') {
    // The scheme is not echoed: a client that sends the bare secret would get part of it back.
    return unauthorized('The Authorization header must use the Token scheme: "Authorization: Token <token>"');
  }
  if (credentials.length === 0) return unauthorized('Invalid Authorization header: no token after "Token"');
  if (credentials.length > 1) return unauthorized('Invalid Authorization header: the token must not contain spaces');
  const secret = credentials[0]!;
  if (!TOKEN_PATTERN.test(secret)) {
    return unauthorized('Invalid token: an API token is "ntd_" followed by 43 letters, digits, "-" or "_"');
  }
  const token = tokens.findBySecret(secret);
  if (!token) return unauthorized('Invalid token: no such token');
  if (token.revokedAt !== null) {
    return unauthorized(`Token #${token.id} was revoked at ${token.revokedAt}`, RevokedTokenError);
  }
  return token;
}

/**
 * The public tier's guard. Anyone may call a public route; a request that presents a token anyway
 * (the Token scheme) is held to it, as Django REST Framework's TokenAuthentication holds it on a view
 * that allows anyone: a malformed, unknown or revoked token is a 401, so every use of a revoked token
 * is refused and its client learns that it is dead. A live token changes nothing (the request still
 * counts against its address, and is not a use of the token); other schemes (Basic, Bearer) are not
 * ours and are let through.
 */
export function createPublicGuard(tokens: TokensSlice, options: Pick<GuardOptions, 'onUnauthorized'> = {}): TierGuard {
  return (request: ApiRequest, route: RouteDefinition): void => {
    const header = request.headers.authorization;
    if (header === undefined || !PRESENTS_TOKEN.test(header)) return;
    const token = liveToken(tokens, request, options);
    if (!route.grantable) return;
    // A route a token may be approved for: an approved token is used (and counted) as on a token route.
    request.approvals = approvalsOf(token);
    const approved = grantsCover(token.grants, route.name);
    if (approved) request.tokenId = String(token.id);
    tokens.recordUse(token, approved ? route.name : null);
  };
}

/** What `token` is approved for, read from the token itself each time (a grant or revocation shows at once). */
function approvalsOf(token: ApiToken): TokenApprovals {
  return {
    tokenId: String(token.id),
    get live() {
      return token.revokedAt === null;
    },
    approves: (name) => token.revokedAt === null && grantsCover(token.grants, name),
  };
}

/** The live token `request` presents; else its 401 is thrown, after `onUnauthorized` has seen it. */
function liveToken(tokens: TokensSlice, request: ApiRequest, options: GuardOptions): ApiToken {
  const result = authenticate(tokens, request);
  if (result instanceof ApiError) {
    options.onUnauthorized?.(request, { revoked: result instanceof RevokedTokenError });
    throw result;
  }
  return result;
}

/** The guard of one tier; it records every authenticated use and sets `request.tokenId`. */
export function createGuard(tokens: TokensSlice, tier: 'token' | 'staff', options: GuardOptions = {}): TierGuard {
  return (request: ApiRequest, route: RouteDefinition): void => {
    const token = liveToken(tokens, request, options);
    request.tokenId = String(token.id);
    request.approvals = approvalsOf(token);
    const approved = tier === 'staff' ? token.staff : grantsCover(token.grants, route.name);
    tokens.recordUse(token, approved ? route.name : null);
    if (approved) return;
    const headers = options.onForbidden?.(request) ?? undefined;
    const where = `${route.method} ${openApiPath(route.path)}`;
    throw new ApiError(
      403,
      'forbidden',
      tier === 'staff'
        ? `Token #${token.id} is not a staff token; ${where} needs one (an administrator sends TOKEN STAFF #${token.id} ON)`
        : `Token #${token.id} is not approved for ${route.name} (${where}); an administrator must grant it (TOKEN GRANT #${token.id} ${route.name})`,
      undefined,
      headers,
    );
  };
}
