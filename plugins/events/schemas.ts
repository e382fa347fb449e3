/**
 * The events' JSON schemas, for the OpenAPI document: one item of the stream is one Server-Sent Events frame,
 * written here as `{id, event, data}` (the frame's `id:`, `event:` and `data:` lines, `data` parsed). Fields
 * marked as such appear only where the reader may see them (a token approved for `irc.events`; `identity` also
 * needs `irc.users` or `irc.user`).
 */
import type { JsonSchema } from '../../lib/sdk.js';

const text = (description: string) => ({ type: 'string', description }) as const;
const maybe = (description: string) => ({ type: ['string', 'null'], description }) as const;
const count = (description: string) => ({ type: ['integer', 'null'], minimum: 0, description }) as const;

const identity = {
  type: 'object',
  description:
    'Who the user is, as far as the bot knows: only for a token approved for `irc.events` and `irc.users` or `irc.user`.',
  properties: {
    ident: maybe('The user name (ident).'),
    host: maybe('The host as the network shows it.'),
    real_host: maybe('The host behind any cloak (operators see it).'),
    ip: maybe('The IP address, where the bot sees it.'),
    realname: maybe('The real name (gecos).'),
    account: maybe('The account the user is logged in to.'),
  },
} as const;

const channel = text('The channel.');
const nick = text('The nick.');

/** The data of each event type, without `time` (every event has it). */
const dataOf: Record<string, { description: string; properties: Record<string, unknown>; required: string[] }> = {
  join: {
    description: 'A user joined a channel the bot is in.',
    properties: { channel, nick, identity },
    required: ['channel', 'nick'],
  },
  part: {
    description: 'A user left a channel the bot is in.',
    properties: { channel, nick, reason: maybe('The part message.') },
    required: ['channel', 'nick', 'reason'],
  },
  kick: {
    description: 'A user was kicked from a channel the bot is in.',
    properties: { channel, nick, by: maybe('Who kicked.'), reason: maybe('The kick message.') },
    required: ['channel', 'nick', 'by', 'reason'],
  },
  quit: {
    description:
      'A user left the network (seen in a shared channel, or, to an operator bot, in a server notice). `killed_by` when killed.',
    properties: {
      nick,
      reason: maybe('The quit message, where the line says it.'),
      killed_by: text('Who killed the user (a KILL).'),
      channels: {
        type: 'array',
        items: { type: 'string' },
        description: 'The channels the bot saw the user in (public ones only, publicly).',
      },
      identity,
    },
    required: ['nick', 'reason', 'channels'],
  },
  nick: {
    description: 'A user changed nick.',
    properties: { old_nick: text('The nick before.'), new_nick: text('The nick after.') },
    required: ['old_nick', 'new_nick'],
  },
  topic: {
    description: "A channel's topic changed.",
    properties: { channel, topic: text('The new topic.'), set_by: maybe('Who set it.') },
    required: ['channel', 'topic', 'set_by'],
  },
  mode: {
    description: "A channel's modes changed.",
    properties: {
      channel,
      by: maybe('Who changed them.'),
      change: text('The change as the line gave it, e.g. `+o-v`.'),
      parameters: {
        type: 'array',
        items: { type: 'string' },
        description:
          "The change's parameters; publicly only the nicks given or taken a rank (no key, limit or mask); masks only with `irc.users` or `irc.user`.",
      },
      modes: text("The channel's public modes after the change (no key)."),
    },
    required: ['channel', 'by', 'change', 'parameters', 'modes'],
  },
  away: {
    description: 'A user in a shared channel went away or came back.',
    properties: { nick, away: { type: 'boolean' }, message: maybe('The away message (tokens only).') },
    required: ['nick', 'away'],
  },
  account: {
    description: 'A user logged in or out (only with `irc.users` or `irc.user` too).',
    properties: { nick, identity },
    required: ['nick', 'identity'],
  },
  connect: {
    description: 'A client connected (seen by an operator bot in a server notice).',
    properties: { nick, server: maybe('The server it connected to.'), identity },
    required: ['nick', 'server'],
  },
  channel_created: {
    description: 'A channel was formed (or, publicly, became public).',
    properties: { channel },
    required: ['channel'],
  },
  channel_emptied: {
    description: 'A channel emptied (or, publicly, became secret or private).',
    properties: { channel },
    required: ['channel'],
  },
  server_linked: {
    description: 'A server linked.',
    properties: {
      server: text('The server.'),
      uplink: maybe('The server it linked to.'),
      description: text('Its description.'),
    },
    required: ['server'],
  },
  server_split: {
    description: 'A server split off.',
    properties: { server: text('The server.') },
    required: ['server'],
  },
  counts: {
    description: "The network's counts (LUSERS) changed.",
    properties: {
      users: count('Users.'),
      channels: count('Channels.'),
      operators: count('Operators.'),
      servers: count('Servers.'),
      max_users: count('The most users at once.'),
    },
    required: ['users', 'channels', 'operators', 'servers', 'max_users'],
  },
};

const time = { type: 'string', format: 'date-time', description: 'When the bot saw it.' } as const;

function frame(event: string, description: string, data: JsonSchema, id: boolean): JsonSchema {
  return {
    type: 'object',
    description,
    required: id ? ['id', 'event', 'data'] : ['event', 'data'],
    properties: {
      ...(id
        ? {
            id: text(
              "`<run>-<number>` (`<run>-t<number>` on a token's stream, `<run>-f<number>` with identities): give it back as Last-Event-ID (or since=) to resume after it.",
            ),
          }
        : {}),
      event: { const: event },
      data,
    },
  };
}

/** One item of the stream: an event, or one of the stream's own frames (`hello`, `gap`, `end`). */
export const streamItemSchema: JsonSchema = {
  oneOf: [
    ...Object.entries(dataOf).map(([type, { description, properties, required }]) =>
      frame(
        type,
        description,
        { type: 'object', required: ['time', ...required], properties: { time, ...properties } },
        true,
      ),
    ),
    frame(
      'hello',
      'First, once: what this stream shows.',
      {
        type: 'object',
        required: ['view', 'identities', 'heartbeat_seconds'],
        properties: {
          view: { enum: ['public', 'token'], description: '`token` for a token approved for `irc.events`.' },
          identities: { type: 'boolean', description: 'Whether `identity` fields are shown.' },
          heartbeat_seconds: { type: 'integer', description: 'How often a comment line comes when nothing happens.' },
        },
      },
      false,
    ),
    frame(
      'gap',
      'On a resume: events were dropped before they could be replayed.',
      {
        type: 'object',
        required: ['lost', 'message'],
        properties: {
          lost: { type: ['integer', 'null'], description: 'How many; null when unknown (the bot restarted).' },
          message: text('Why.'),
        },
      },
      false,
    ),
    frame(
      'end',
      'Last: the bot ends the stream.',
      {
        type: 'object',
        required: ['reason', 'message'],
        properties: {
          reason: { enum: ['slow_consumer', 'token_revoked', 'approval_withdrawn', 'shutting_down'] },
          message: text('What happened, and what to do.'),
        },
      },
      false,
    ),
  ],
};
