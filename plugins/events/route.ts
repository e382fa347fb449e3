/**
 * `GET /api/irc/events/`: the network's events as Server-Sent Events. Public, like the rest of the public API
 * (only public channels' events, no user's identity); a token approved for `irc.events` sees every channel's,
 * and with `irc.users` or `irc.user` also who users are. Filters: `types=`, `channel=`, `server=`; replay with
 * `Last-Event-ID` (or `?since=<id>`, for a client that cannot send the header on its first connect).
 */
import {
  ApiError,
  clientGroup,
  invalidParameter,
  StreamBody,
  type ApiRequest,
  type ApiResponse,
  type RouteDefinition,
} from '../../lib/sdk.js';
import { Journal, type EventId, type JournalEntry, type View } from './journal.js';
import { streamItemSchema } from './schemas.js';
import type { EventsConfig } from './schema.js';
import { EVENT_TYPES } from './service-types.js';
import { Reader, type EventFilter, type Fanout } from './streams.js';

export const EVENT_STREAM_TYPE = 'text/event-stream; charset=utf-8';

/** The grant that opens the full stream, and those that add who users are. */
export const EVENTS_GRANT = 'irc.events';
const IDENTITY_GRANTS = ['irc.users', 'irc.user'];

/** Seconds a client over a cap of open streams is told to wait (streams end when their clients go). */
const RETRY_AFTER_SECONDS = 30;

/** The view a request's token opens, if any. */
export function viewOf(request: Pick<ApiRequest, 'approvals'>): View {
  const { approvals } = request;
  if (!approvals?.approves(EVENTS_GRANT)) return 'public';
  return IDENTITY_GRANTS.some((grant) => approvals.approves(grant)) ? 'full' : 'token';
}

function parseFilter(request: ApiRequest, fold: (name: string) => string): EventFilter {
  const { query } = request;
  const typesText = query.get('types');
  let types: Set<string> | null = null;
  if (typesText !== null) {
    types = new Set(
      typesText
        .split(',')
        .map((type) => type.trim())
        .filter(Boolean),
    );
    const unknown = [...types].filter((type) => !(EVENT_TYPES as readonly string[]).includes(type));
    if (unknown.length > 0 || types.size === 0) {
      throw invalidParameter(
        'types',
        `${unknown.length > 0 ? `unknown event type ${unknown.join(', ')}` : 'no event type given'}; the types are ${EVENT_TYPES.join(', ')}`,
      );
    }
  }
  const channel = query.get('channel');
  const server = query.get('server');
  if (channel === '') throw invalidParameter('channel', 'a channel name is needed, e.g. channel=%23chat');
  if (server === '') throw invalidParameter('server', 'a server name is needed, e.g. server=irc.example.net');
  return {
    types,
    channel: channel === null ? null : fold(channel),
    server: server === null ? null : server.toLowerCase(),
  };
}

/** Where the reader resumes: the `Last-Event-ID` header, else `?since=`; null to start at the live edge. */
function resumePoint(request: ApiRequest): EventId | null {
  const header = request.headers['last-event-id'];
  const given = typeof header === 'string' && header.trim() !== '' ? header.trim() : request.query.get('since');
  if (given === null) return null;
  const parsed = Journal.parse(given);
  if (!parsed) {
    throw invalidParameter(
      typeof header === 'string' && header.trim() !== '' ? 'Last-Event-ID' : 'since',
      `"${given.slice(0, 40)}" is not an event id: an id is what an event's "id:" line gave, e.g. ${'m3x9k2a1-42'}`,
    );
  }
  return parsed;
}

function tooMany(what: string, limit: number): ApiError {
  return new ApiError(
    429,
    'rate_limited',
    `Too many open event streams ${what} (at most ${limit}); close one, or retry in ${RETRY_AFTER_SECONDS} s`,
    undefined,
    { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  );
}

export interface EventsRouteOptions {
  config: EventsConfig;
  journal: Journal;
  fanout: Fanout;
  fold: (name: string) => string;
}

export function eventsRoute({ config, journal, fanout, fold }: EventsRouteOptions): RouteDefinition {
  return {
    method: 'GET',
    path: '/api/irc/events/',
    name: EVENTS_GRANT,
    summary: "The network's events as they happen (Server-Sent Events), with replay",
    tier: 'public',
    grantable: true,
    streamType: 'text/event-stream',
    response: streamItemSchema,
    queryParameters: [
      {
        name: 'types',
        description: `Only these event types, comma-separated (${EVENT_TYPES.join(', ')}).`,
        schema: { type: 'string' },
      },
      {
        name: 'channel',
        description: "Only events about this channel (a quit's when the user was in it).",
        schema: { type: 'string' },
      },
      {
        name: 'server',
        description: 'Only the events that name this server: connect, server_linked, server_split.',
        schema: { type: 'string' },
      },
      {
        name: 'since',
        description:
          'Replay the events after this event id (as the Last-Event-ID header does, which wins when both are given).',
        schema: { type: 'string' },
      },
      {
        name: 'Last-Event-ID',
        in: 'header',
        description:
          'Replay the events after this event id: what a browser sends when it reconnects (a heartbeat moves it on too). A `gap` event first says how many could not be replayed.',
        schema: { type: 'string' },
      },
    ],
    handler(request): ApiResponse {
      const filter = parseFilter(request, fold);
      const resume = resumePoint(request);
      const view = viewOf(request);
      const tokenId = view === 'public' ? undefined : request.approvals!.tokenId;
      if (fanout.size >= config.max_streams) throw tooMany('on this bot', config.max_streams);
      const address = clientGroup(request.ip, config.ipv6_prefix_length);
      if (fanout.openFrom(address) >= config.max_streams_per_address) {
        throw tooMany('from this address', config.max_streams_per_address);
      }
      if (tokenId !== undefined && fanout.openWith(tokenId) >= config.max_streams_per_token) {
        throw tooMany(`with token #${tokenId}`, config.max_streams_per_token);
      }
      const open = (stream: Parameters<StreamBody['open']>[0]) => {
        let replay: readonly JournalEntry[] = [];
        let opening = `retry: ${config.retry_ms}\n\n`;
        opening += `event: hello\ndata: ${JSON.stringify({
          view: view === 'public' ? 'public' : 'token',
          identities: view === 'full',
          heartbeat_seconds: config.heartbeat_seconds,
        })}\n\n`;
        if (resume) {
          const { entries, lost } = journal.after(resume, view);
          replay = entries;
          if (lost !== 0) {
            opening += `event: gap\ndata: ${JSON.stringify({
              lost,
              message:
                lost === null
                  ? 'The bot restarted since that event: how many were missed is not known.'
                  : `${lost} event${lost === 1 ? ' was' : 's were'} dropped before they could be replayed (plugins.events.buffer_events, buffer_seconds).`,
            })}\n\n`;
          }
        }
        // The replay reaches the latest event kept, published or not: the next flush sends only what follows.
        const reader = new Reader(stream, view, filter, address, request.approvals, tokenId, journal.nextNumber - 1);
        fanout.add(reader, opening, replay);
      };
      return { body: new StreamBody(EVENT_STREAM_TYPE, open) };
    },
  };
}
