/**
 * The staff tier: token administration over HTTP for tokens an administrator marked as staff. A front end
 * over the token rules (`rules.ts`), as the IRC commands are: the same changes, in the same audit log,
 * with the staff token (and its owner) as the actor; a staff token administers every token. A PATCH or
 * DELETE answers only once the tokens are on disk.
 */
import {
  ApiError,
  notFound,
  paginate,
  unavailable,
  type ApiRequest,
  type FromJsonSchema,
  type RouteDefinition,
} from '../../lib/sdk.js';
import type { ApiToken, AuditEntry, TokensSlice } from './model.js';
import { parseTokenId } from './endpoints.js';
import type { Caller, Changed, Revoked, TokenRules } from './rules.js';

export interface StaffRoutesOptions {
  rules: TokenRules;
  /** The tokens, for the list and the audit log. */
  tokens: TokensSlice;
  /** Folds `?search=` and the owners and labels it looks in (the network's CASEMAPPING; default lower case). */
  searchFold?: (text: string) => string;
}

const tokenSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'label',
    'owner',
    'created_at',
    'last_used_at',
    'revoked_at',
    'is_active',
    'staff',
    'endpoints',
    'requests',
    'uses',
  ],
  properties: {
    id: { type: 'integer', description: 'The token id, written #<id> on IRC.' },
    label: { type: 'string' },
    owner: { type: 'string', description: 'The NickServ account that created it.' },
    created_at: { type: 'string', format: 'date-time' },
    last_used_at: { type: ['string', 'null'], format: 'date-time', description: 'The last request that presented it.' },
    revoked_at: { type: ['string', 'null'], format: 'date-time' },
    is_active: { type: 'boolean', description: 'Not revoked.' },
    staff: { type: 'boolean', description: 'May call /api/staff/.' },
    endpoints: {
      type: 'array',
      items: { type: 'string' },
      description: 'Approved endpoint names and wildcards (irc.*, netstats.*).',
    },
    requests: {
      type: 'array',
      items: { type: 'string' },
      description:
        'Endpoint names the owner asked for on the website and no administrator has granted or declined yet.',
    },
    uses: {
      type: 'object',
      additionalProperties: { type: 'integer' },
      description: 'Approved requests per endpoint name.',
    },
  },
} as const;

const auditEntrySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['at', 'token_id', 'action', 'actor', 'details'],
  properties: {
    at: { type: 'string', format: 'date-time' },
    token_id: { type: 'integer' },
    action: { enum: ['create', 'grant', 'deny', 'revoke', 'staff', 'request', 'decline'] },
    actor: {
      type: 'object',
      additionalProperties: false,
      required: ['account', 'via', 'token_id', 'reason', 'address'],
      description:
        'Who made the change: an account over IRC or on the website (signed in), the owner of a staff token over ' +
        "HTTP, an operator on the bot's command line (cli: the name they ran it as), or the bot itself (system).",
      properties: {
        account: {
          type: ['string', 'null'],
          description: 'The account that made the change; null when the bot made it by itself (via system).',
        },
        via: { enum: ['irc', 'web', 'http', 'cli', 'system'] },
        token_id: { type: ['integer', 'null'], description: 'The staff token used, for changes over HTTP.' },
        address: {
          type: ['string', 'null'],
          description:
            "The client's address, for changes on the website or over HTTP (behind a reverse proxy, the client " +
            'the proxies in http.trust_proxy name); null for IRC commands and the bot itself.',
        },
        reason: {
          type: ['string', 'null'],
          description:
            'Why the bot made the change by itself (via system): "secret not delivered" for a token revoked because ' +
            'the answer with its secret could not reach its owner, "not saved" for a new token revoked because the ' +
            'store could not write it (its secret was never shown). Null otherwise.',
        },
      },
    },
    details: { type: 'array', items: { type: 'string' } },
    grants_after: { type: 'array', items: { type: 'string' } },
  },
} as const;

const tokenDetailSchema = {
  ...tokenSchema,
  required: [...tokenSchema.required, 'audit'],
  properties: { ...tokenSchema.properties, audit: { type: 'array', items: auditEntrySchema } },
} as const;

const tokenListSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['count', 'next', 'previous', 'results'],
  properties: {
    count: { type: 'integer' },
    next: { type: ['string', 'null'] },
    previous: { type: ['string', 'null'] },
    results: { type: 'array', items: tokenSchema },
  },
} as const;

const names = { type: 'array', items: { type: 'string', minLength: 1, maxLength: 100 }, maxItems: 100 } as const;

export const patchBodySchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    grant: { ...names, description: 'Endpoint names or wildcards to approve.' },
    deny: { ...names, description: 'Endpoint names or wildcards to withdraw.' },
    staff: { type: 'boolean', description: 'Mark or unmark the token as staff.' },
  },
} as const;

/** The PATCH body as it passed its schema, and the answers, each typed off its schema. */
type PatchBody = FromJsonSchema<typeof patchBodySchema>;
type TokenAnswer = FromJsonSchema<typeof tokenSchema>;
export type AuditAnswer = FromJsonSchema<typeof auditEntrySchema>;
type TokenDetailAnswer = FromJsonSchema<typeof tokenDetailSchema>;
type TokenListAnswer = FromJsonSchema<typeof tokenListSchema>;

export function tokenJson(token: ApiToken): TokenAnswer {
  return {
    id: token.id,
    label: token.label,
    owner: token.owner,
    created_at: token.createdAt,
    last_used_at: token.lastUsedAt,
    revoked_at: token.revokedAt,
    is_active: token.revokedAt === null,
    staff: token.staff,
    endpoints: [...token.grants],
    requests: [...token.requests],
    uses: { ...token.uses },
  };
}

export function auditJson(entry: AuditEntry): AuditAnswer {
  return {
    at: entry.at,
    token_id: entry.tokenId,
    action: entry.action,
    actor: {
      account: entry.actor.account,
      via: entry.actor.via,
      token_id: entry.actor.tokenId ?? null,
      reason: entry.actor.reason ?? null,
      address: entry.actor.address ?? null,
    },
    details: [...entry.details],
    ...(entry.grantsAfter ? { grants_after: [...entry.grantsAfter] } : {}),
  };
}

function invalidBody(field: string, message: string): ApiError {
  return new ApiError(400, 'invalid_body', `${field || 'body'}: ${message}`, [{ field, message }]);
}

const idParameter = 'id';

const listQueryParameters: RouteDefinition['queryParameters'] = [
  { name: 'limit', description: 'Page size (default 100, max 1000).', schema: { type: 'integer', minimum: 1 } },
  { name: 'offset', description: 'Items to skip.', schema: { type: 'integer', minimum: 0 } },
  {
    name: 'search',
    description: 'Case-insensitive substring of the label or the owner.',
    schema: { type: 'string' },
  },
  {
    name: 'ordering',
    description: 'id, owner, created_at or last_used_at; prefix - for descending.',
    schema: { type: 'string' },
  },
];

/** The staff token's owner as the rules' caller: a staff token administers every token. */
function callerOf(tokens: TokensSlice, request: ApiRequest): Caller {
  const staffToken = tokens.get(Number(request.tokenId));
  // The guard ran and set tokenId; without it the route would not have been reached.
  if (!staffToken) throw new Error(`staff route reached without a staff token (tokenId ${request.tokenId})`);
  return {
    actor: { account: staffToken.owner, via: 'http', tokenId: staffToken.id, address: request.ip },
    isAdmin: async () => true,
    asked: { method: request.method },
  };
}

/** The route's token id; an id that is not one is a token that does not exist. */
function tokenIdOf(request: ApiRequest): number {
  const id = parseTokenId(request.params[idParameter]);
  if (id === null) throw tokenNotFound(request);
  return id;
}

function tokenNotFound(request: ApiRequest): ApiError {
  return notFound('token_not_found', `No token with id ${JSON.stringify(request.params[idParameter] ?? '')}`);
}

/** The error a refusal of the rules answers. */
function refusalError(request: ApiRequest, refusal: Exclude<Changed | Revoked, { ok: true }>): ApiError {
  switch (refusal.reason) {
    case 'no-such-token':
      return tokenNotFound(request);
    case 'revoked': {
      const { id, revokedAt } = refusal.token;
      return invalidBody('', `token #${id} was revoked at ${revokedAt}; a revoked token cannot be changed`);
    }
    case 'unknown-endpoint':
      return invalidBody(
        `/${refusal.list}/${refusal.index}`,
        `unknown endpoint "${refusal.name}"; valid names: ${refusal.valid.join(', ')}`,
      );
    case 'in-grant-and-deny':
      return invalidBody(`/deny/${refusal.index}`, `"${refusal.name}" is in both grant and deny`);
    case 'not-admin':
      throw new Error(`a staff token was refused as no administrator: ${refusal.account}`);
  }
}

function detail(tokens: TokensSlice, token: ApiToken): { body: TokenDetailAnswer } {
  return { body: { ...tokenJson(token), audit: tokens.audit(token.id).map(auditJson) } };
}

/**
 * The token's detail after a change, even one that changed nothing, once it is on disk: a `200` says that
 * the state it shows survives a crash, so a request sent again after a `503` confirms it.
 */
function changedDetail(request: ApiRequest, tokens: TokensSlice, result: Changed | Revoked) {
  if (!result.ok) throw refusalError(request, result);
  if (!result.saved) {
    throw unavailable(
      `token #${result.token.id} could not be saved (the bot could not write its store): what this request changed ` +
        'holds until the bot restarts; send the request again to save it',
    );
  }
  return detail(tokens, result.token);
}

export function staffRoutes({ rules, tokens, searchFold }: StaffRoutesOptions): RouteDefinition[] {
  return [
    {
      method: 'GET',
      path: '/api/staff/tokens/',
      name: 'staff.tokens',
      summary: 'Every API token (never its secret), paginated',
      tier: 'staff',
      response: tokenListSchema,
      queryParameters: listQueryParameters,
      handler(request): { body: TokenListAnswer } {
        const items = tokens.all().map(tokenJson);
        return {
          body: paginate(request, items, {
            orderingFields: ['id', 'owner', 'created_at', 'last_used_at'],
            defaultOrdering: 'id',
            searchFold,
            searchField: (item) => [item.label, item.owner],
          }),
        };
      },
    },
    {
      method: 'GET',
      path: '/api/staff/tokens/:id/',
      name: 'staff.token',
      summary: 'One API token with its audit log',
      tier: 'staff',
      response: tokenDetailSchema,
      async handler(request) {
        const found = await rules.find(callerOf(tokens, request), tokenIdOf(request));
        if (!found.ok) throw tokenNotFound(request);
        return detail(tokens, found.token);
      },
    },
    {
      method: 'PATCH',
      path: '/api/staff/tokens/:id/',
      name: 'staff.token.update',
      summary: 'Grant or deny endpoints, or change the staff flag, of one token',
      tier: 'staff',
      body: patchBodySchema,
      response: tokenDetailSchema,
      async handler(request) {
        const id = tokenIdOf(request);
        const result = await rules.change(callerOf(tokens, request), id, request.body as PatchBody);
        return changedDetail(request, tokens, result);
      },
    },
    {
      method: 'DELETE',
      path: '/api/staff/tokens/:id/',
      name: 'staff.token.revoke',
      summary: 'Revoke one token (it stays listed, revoked); answers the token',
      tier: 'staff',
      response: tokenDetailSchema,
      async handler(request) {
        const id = tokenIdOf(request);
        return changedDetail(request, tokens, await rules.revoke(callerOf(tokens, request), id));
      },
    },
  ];
}
