/**
 * `GET /api/irc/channels/` and `/api/irc/channels/{name}/`: the public channels.
 * A secret (+s) or private (+p) channel, or one the collector only sees as an
 * operator, is "not found" here, to everyone. Members are nicks and prefixes only.
 */
import {
  type FromJsonSchema,
  notFound,
  paginate,
  searchFoldOf,
  type Channel,
  type NetworkModel,
  type RouteDefinition,
} from '../../lib/sdk.js';
import { ListCache, listQueryParameters, nullableTime, pageSchema, type ModelChangeSubscriber } from './lists.js';
import { requireReady } from './network.js';
import type { ApiConfig } from './schema.js';

const channelItemProperties = {
  name: { type: 'string', description: 'The channel name, with its # (percent-encode it as %23 in paths).' },
  users: {
    type: 'integer',
    minimum: 0,
    description: 'Users in the channel, as LIST (or the collector, where it is in it) counts them.',
  },
  topic: { type: 'string', description: 'The topic; empty when none is set.' },
  modes: {
    type: 'string',
    description: 'Channel modes without parameters (so never a key), e.g. "+nt"; empty when none.',
  },
} as const;

export const channelItemSchema = {
  type: 'object',
  required: ['name', 'users', 'topic', 'modes'],
  additionalProperties: false,
  properties: channelItemProperties,
} as const;

export const channelDetailSchema = {
  type: 'object',
  required: [
    'name',
    'users',
    'topic',
    'modes',
    'topic_set_by',
    'topic_set_at',
    'created_at',
    'members',
    'members_known',
  ],
  additionalProperties: false,
  properties: {
    ...channelItemProperties,
    topic_set_by: { type: ['string', 'null'], description: 'Nick that set the topic, when known.' },
    topic_set_at: { ...nullableTime, description: 'When the topic was set, when known.' },
    created_at: { ...nullableTime, description: 'When the channel was created, when known.' },
    members_known: {
      type: 'boolean',
      description: 'Whether the collector is in the channel and so knows its members; otherwise `members` is empty.',
    },
    members: {
      type: 'array',
      description: 'Who is in the channel, with their status prefixes (highest first), ordered by nick.',
      items: {
        type: 'object',
        required: ['nick', 'prefix'],
        additionalProperties: false,
        properties: {
          nick: { type: 'string' },
          prefix: { type: 'string', description: 'Status prefixes, e.g. "@", "@+" or "" for none.' },
        },
      },
    },
  },
} as const;

const ORDERING_FIELDS = ['name', 'users'];

/** A channel in a list; its type is the schema's. */
function channelItem(channel: Channel): FromJsonSchema<typeof channelItemSchema> {
  return { name: channel.name, users: channel.users, topic: channel.topic, modes: channel.modes };
}

/** The channel behind a path parameter, or the contract's 404 whether it is unknown or hidden. */
function findPublicChannel(model: NetworkModel, name: string): Channel {
  const channel = model.channels.get(name);
  if (!channel || channel.hidden) {
    const hint = /^[#&+!]/.test(name) ? '' : ' (channel names start with #, written %23 in a path)';
    throw notFound('channel_not_found', `No visible channel named ${name}${hint}`);
  }
  return channel;
}

function byName(a: { name: string }, b: { name: string }): number {
  const left = a.name.toLowerCase();
  const right = b.name.toLowerCase();
  return left < right ? -1 : left > right ? 1 : 0;
}

export function channelRoutes(
  model: NetworkModel,
  config: ApiConfig,
  onChange: ModelChangeSubscriber = (listener) => model.on('change', listener),
): RouteDefinition[] {
  const pages = new ListCache<ReturnType<typeof paginate<ReturnType<typeof channelItem>>>>(onChange, {
    reuseMs: config.reuse_ms,
  });
  const searchFold = searchFoldOf(model);
  return [
    {
      method: 'GET',
      path: '/api/irc/channels/',
      name: 'irc.channels',
      summary: 'List of all visible channels',
      tier: 'public',
      maxAge: config.cache_seconds,
      response: pageSchema(channelItemSchema),
      queryParameters: listQueryParameters('the channel name', ORDERING_FIELDS, '-users'),
      handler(request) {
        requireReady(model);
        const body = pages.get(request.search, () =>
          // Filtered and ordered on the model's channels (ties by name): only the page is turned into JSON.
          paginate(
            request,
            [...model.channels.all()].filter((channel) => !channel.hidden),
            {
              orderingFields: ORDERING_FIELDS,
              defaultOrdering: '-users',
              present: channelItem,
              tieBreak: (channel) => channel.name.toLowerCase(),
              searchFold,
              searchField: (channel) => channel.name,
            },
          ),
        );
        return { body };
      },
    },
    {
      method: 'GET',
      path: '/api/irc/channels/:name/',
      name: 'irc.channel',
      summary: 'Details of one channel',
      tier: 'public',
      maxAge: config.cache_seconds,
      response: channelDetailSchema,
      handler(request) {
        requireReady(model);
        const channel = findPublicChannel(model, request.params.name ?? '');
        const members = [...channel.members]
          .map(([member, prefix]) => ({ nick: member.nick, prefix }))
          .sort((a, b) => byName({ name: a.nick }, { name: b.nick }));
        const body: FromJsonSchema<typeof channelDetailSchema> = {
          ...channelItem(channel),
          topic_set_by: channel.topicSetBy,
          topic_set_at: channel.topicSetAt,
          created_at: channel.createdAt,
          members_known: channel.joined,
          members,
        };
        return { body };
      },
    },
  ];
}
