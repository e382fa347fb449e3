/**
 * The webhooks' settings (`plugins.events.webhooks`): the schema of one endpoint, and the checks the schema
 * cannot make, done once at start so that a bad endpoint stops the bot with an error naming its key rather
 * than failing at its first delivery. A secret may stay out of the file: `IRC_DATA_WEBHOOK_SECRET_<NAME>`, when
 * set and not empty, wins over the endpoint's `secret`, as `IRC_DATA_SASL_PASSWORD` does over the SASL password.
 */
import { describeUrl, type FromJsonSchema } from '../../lib/sdk.js';
import type { View } from './journal.js';
import { EVENT_TYPES, type NetworkEventType } from './service-types.js';
import { parseSecret } from './webhooks-signature.js';

const count = (minimum: number, maximum: number, fallback: number, description: string) =>
  ({ type: 'integer', minimum, maximum, default: fallback, description }) as const;

export const webhookEndpointSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'url'],
  properties: {
    name: {
      type: 'string',
      pattern: '^[a-z0-9][a-z0-9_-]{0,31}$',
      'x-expected': 'a name of lower-case letters, digits, - and _ (at most 32, starting with a letter or digit)',
      description:
        'Names the endpoint in the log and in /metrics, and its queue in the store (keep it when the URL changes); ' +
        'its secret may come from IRC_DATA_WEBHOOK_SECRET_<NAME> (upper case, - as _).',
    },
    url: {
      type: 'string',
      pattern: '^https?://',
      'x-expected': 'an http:// or https:// URL',
      description: 'Where the batches are POSTed. Only this URL is called: a redirect is a failed delivery.',
    },
    secret: {
      type: 'string',
      minLength: 1,
      description:
        'The signing secret, Standard Webhooks form: "whsec_" and the base64 of 24 to 64 random bytes. ' +
        'Required here or in IRC_DATA_WEBHOOK_SECRET_<NAME>, which wins when set.',
    },
    types: {
      type: 'array',
      minItems: 1,
      uniqueItems: true,
      items: { type: 'string', enum: EVENT_TYPES },
      description: 'Only these event types (default: every type).',
    },
    view: {
      type: 'string',
      enum: ['public', 'token', 'full'],
      default: 'public',
      description:
        '"public": what the public stream shows (no hidden channel, no user seen only in one, nobody\'s identity); ' +
        '"token": every channel, as a token approved for irc.events sees it; "full": with who users are (identity).',
    },
    batch_events: count(1, 1000, 100, 'The most events in one POST.'),
    batch_wait_ms: count(
      0,
      60_000,
      1000,
      'How long an event may wait for others to join its batch, in milliseconds, when fewer than batch_events are waiting.',
    ),
    max_queued_events: count(
      1,
      1_000_000,
      10_000,
      'The most events kept for the endpoint while it does not take them (kept across restarts); over it, the oldest not yet being sent are dropped.',
    ),
    timeout_seconds: count(1, 120, 15, 'A POST without an answer within this many seconds has failed.'),
    retry_first_ms: count(
      100,
      600_000,
      1000,
      'The wait after a first failed POST, in milliseconds; it doubles after each failure, with jitter.',
    ),
    retry_max_seconds: count(1, 86_400, 600, 'The longest wait between two attempts, in seconds.'),
  },
} as const;

export const webhooksSchema = {
  type: 'array',
  items: webhookEndpointSchema,
  maxItems: 32,
  default: [],
  description:
    'Endpoints the events are POSTed to in signed batches (Standard Webhooks), retried until delivered: docs/webhooks.md.',
} as const;

export type WebhookEndpointConfig = FromJsonSchema<typeof webhookEndpointSchema>;

/** An endpoint as the plugin uses it: checked, its secret decoded. */
export interface WebhookEndpoint {
  name: string;
  /** Its key path in the config, for messages (`config.plugins.events.webhooks[0]`). */
  path: string;
  url: URL;
  /** The URL for the log: no user name, password or query (they may hold secrets). */
  where: string;
  /** The HMAC key: the secret's bytes. */
  key: Buffer;
  /** Only these types; null for every one. */
  types: ReadonlySet<NetworkEventType> | null;
  view: View;
  batchEvents: number;
  batchWaitMs: number;
  maxQueuedEvents: number;
  timeoutMs: number;
  retryFirstMs: number;
  retryMaxMs: number;
}

const PREFIX = 'config.plugins.events.webhooks';

/** The environment variable that may hold the secret of the endpoint `name`. */
export function secretVariable(name: string): string {
  return `IRC_DATA_WEBHOOK_SECRET_${name.toUpperCase().replace(/-/g, '_')}`;
}

/**
 * The endpoints of `entries` (checked by the schema already), with their secrets from `env` where set. Throws
 * one Error listing every problem: a URL that does not parse or has a fragment, a missing or malformed secret, a name given twice (or two names of one variable), a batch bigger than the queue.
 * `secrets` gets every secret and URL password, for the logger to mask.
 */
export function resolveEndpoints(
  entries: readonly WebhookEndpointConfig[],
  env: NodeJS.ProcessEnv,
): { endpoints: WebhookEndpoint[]; secrets: string[] } {
  const problems: string[] = [];
  const endpoints: WebhookEndpoint[] = [];
  const secrets: string[] = [];
  const variables = new Map<string, string>();
  entries.forEach((entry, index) => {
    const path = `${PREFIX}[${index}]`;
    const variable = secretVariable(entry.name);
    const other = variables.get(variable);
    if (other !== undefined) {
      problems.push(
        other === entry.name
          ? `${path}.name: "${entry.name}" names another endpoint already; give each its own name`
          : `${path}.name: "${entry.name}" and "${other}" would both take their secret from ${variable}; rename one`,
      );
    }
    variables.set(variable, entry.name);
    let url: URL | undefined;
    try {
      url = new URL(entry.url);
    } catch {
      problems.push(`${path}.url must be an http:// or https:// URL, got one that does not parse`);
    }
    if (url && url.password !== '') secrets.push(decodeURIComponent(url.password));
    if (url && url.hash !== '') problems.push(`${path}.url must not have a #fragment (a request never sends it)`);
    const fromEnv = env[variable];
    const secretText = fromEnv !== undefined && fromEnv !== '' ? fromEnv : entry.secret;
    let key: Buffer | undefined;
    if (secretText === undefined) {
      problems.push(`${path}.secret is required (a string), got nothing; set it in the file or in ${variable}`);
    } else {
      secrets.push(secretText);
      const parsed = parseSecret(secretText);
      if (typeof parsed === 'string') {
        const where = secretText === entry.secret ? `${path}.secret` : `${variable} (for ${path})`;
        problems.push(`${where} ${parsed}`);
      } else {
        key = parsed;
      }
    }
    if (entry.batch_events > entry.max_queued_events) {
      problems.push(
        `${path}.batch_events (${entry.batch_events}) must not be more than max_queued_events (${entry.max_queued_events})`,
      );
    }
    if (!url || !key) return;
    endpoints.push({
      name: entry.name,
      path,
      url,
      where: describeUrl(url),
      key,
      types: entry.types ? new Set(entry.types) : null,
      view: entry.view,
      batchEvents: entry.batch_events,
      batchWaitMs: entry.batch_wait_ms,
      maxQueuedEvents: entry.max_queued_events,
      timeoutMs: entry.timeout_seconds * 1000,
      retryFirstMs: entry.retry_first_ms,
      retryMaxMs: entry.retry_max_seconds * 1000,
    });
  });
  if (problems.length > 0) throw new Error(problems.join('; '));
  return { endpoints, secrets };
}
