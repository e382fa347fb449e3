/** Config slice of the credential checker (`plugins.nickserv`). */
import { ipv6PrefixLengthSchema, type FromJsonSchema } from '../../lib/sdk.js';

export const BACKENDS = ['sasl', 'atheme-jsonrpc', 'anope-rpc', 'anope-xmlrpc'] as const;
export type BackendName = (typeof BACKENDS)[number];

export const nickservConfigSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    backend: {
      type: 'string',
      enum: [...BACKENDS],
      default: 'sasl',
      description:
        'How passwords are checked: "sasl" logs in over a short-lived IRC connection (any network with SASL), ' +
        '"atheme-jsonrpc" uses Atheme\'s JSON-RPC, "anope-rpc" Anope 2.1\'s JSON-RPC, "anope-xmlrpc" Anope 2.0\'s ' +
        'XML-RPC (the three need "url"). ircd-hybrid and ngircd offer no SASL: choose an RPC backend there.',
    },
    url: {
      type: 'string',
      pattern: '^https?://',
      'x-expected': 'an http:// or https:// URL',
      description:
        'The RPC endpoint, e.g. "http://127.0.0.1:8080/jsonrpc" (Atheme, Anope 2.1) or "http://127.0.0.1:8080/xmlrpc" ' +
        '(Anope 2.0); required by atheme-jsonrpc, anope-rpc and anope-xmlrpc.',
    },
    rpc_token: {
      type: 'string',
      minLength: 1,
      description: "anope-rpc only: the bearer token of Anope's RPC interface, if it is configured with one.",
    },
    host: {
      type: 'string',
      minLength: 1,
      description: 'sasl only: the IRC server to connect to; defaults to irc.host.',
    },
    port: {
      type: 'integer',
      minimum: 1,
      maximum: 65535,
      description: 'sasl only: its port; defaults to irc.port.',
    },
    tls: { type: 'boolean', description: 'sasl only: connect with TLS; defaults to irc.tls.' },
    tls_verify: {
      type: 'boolean',
      description: "sasl only: check the server's TLS certificate; defaults to irc.tls_verify.",
    },
    timeout_seconds: {
      type: 'number',
      minimum: 1,
      maximum: 120,
      default: 10,
      description:
        'A check (one SASL exchange, or one RPC request) without an answer within this many seconds is "unavailable" (503).',
    },
    max_connections: {
      type: 'integer',
      minimum: 1,
      maximum: 64,
      default: 4,
      description: 'Checks talking to services at once, network-wide; more wait in the queue.',
    },
    max_queued: {
      type: 'integer',
      minimum: 0,
      maximum: 10000,
      default: 32,
      description: 'Checks that may wait for a free connection; beyond that a check is answered 503 at once.',
    },
    rate_limit: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Brute-force protection: failed checks counted in a sliding window; over the limit, 429.',
      properties: {
        window_seconds: {
          type: 'integer',
          minimum: 1,
          maximum: 86400,
          default: 900,
          description: 'The sliding window in seconds.',
        },
        max_failures_per_nick: {
          type: 'integer',
          minimum: 1,
          default: 5,
          description:
            'Failures for one nick from one caller (a client address group on the website, an API token) in the ' +
            "window; that caller's next check of that nick is refused. Other callers are not: a guesser cannot " +
            'lock the owner out.',
        },
        max_failures_per_account: {
          type: 'integer',
          minimum: 1,
          default: 30,
          description:
            'Failures for one nick from the callers it does not know, all together, in account_window_seconds: ' +
            'the bound on guesses at one account from everywhere. Past it, only callers the nick knows (that ' +
            'checked its password right in the last 30 days, since the bot started) may check it.',
        },
        account_window_seconds: {
          type: 'integer',
          minimum: 60,
          maximum: 604800,
          default: 3600,
          description: 'The sliding window of max_failures_per_account, in seconds.',
        },
        ipv6_prefix_length: ipv6PrefixLengthSchema(
          'IPv6 client addresses count as their network of this prefix length (one holder usually has a whole ' +
            '/64); IPv4 addresses each as itself.',
        ),
        max_failures_per_token: {
          type: 'integer',
          minimum: 1,
          default: 50,
          description: 'Failures for one API token (any nick) in the window; its next check is refused.',
        },
        max_queued_per_nick: {
          type: 'integer',
          minimum: 0,
          maximum: 10000,
          default: 32,
          description:
            'Checks of one nick that may wait while others of it run (a nick runs at most as many at once as ' +
            'it has failures left); one more is refused with 429.',
        },
        max_failures_per_address: {
          type: 'integer',
          minimum: 1,
          default: 20,
          description:
            "Failed sign-ins on the website from one client address (any account) in the window; the address's " +
            'next sign-in is refused. Sign-ins also count in the window of the account (nick) they name.',
        },
        max_queued_per_address: {
          type: 'integer',
          minimum: 0,
          maximum: 10000,
          default: 32,
          description: 'Sign-ins from one client address that may wait while others of it run; one more is refused.',
        },
        max_queued_per_token: {
          type: 'integer',
          minimum: 0,
          maximum: 10000,
          default: 32,
          description:
            'Checks of one API token that may wait while others of it run (at most as many run at once as ' +
            'it has failures left); one more is refused with 429.',
        },
      },
    },
  },
} as const;

/** The credential checker's settings, as the schema above describes them. */
export type NickservConfig = FromJsonSchema<typeof nickservConfigSchema>;
