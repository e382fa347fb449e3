/**
 * The network statistics' profiles: a channel's (`channel/:channel/`: overview, hourly lines, top users today,
 * its members' clients and countries) and a user's (`user/:nick/`: overview and hourly activity).
 */
import { notFound, isPublicUser } from '../../lib/sdk.js';
import { EMPTY_HOURS, shares, topOf, topParameter, type Endpoint, type NetstatsContext } from './netstats-context.js';
import {
  channelNamesOf,
  channelProfileSchemas,
  countryName,
  userProfileSchemas,
  type ChannelProfile,
  type UserProfile,
} from './netstats-shapes.js';
import { requireReady } from './network.js';
import { hostmaskOf } from './users.js';

/** `channel/:channel/`: a channel's profile. */
export function channelEndpoint(context: NetstatsContext): Endpoint {
  const { model, today, records, countedUsers } = context;
  return {
    name: 'channel',
    path: '/channel/:channel/',
    summary: 'Channel profile: overview, hourly lines, top users today',
    response: (view) => channelProfileSchemas[view],
    queryParameters: [topParameter],
    handler(request, view): ChannelProfile {
      requireReady(model);
      const name = request.params.channel ?? '';
      const channel = model.channels.get(name);
      if (!channel || (view === 'public' && channel.hidden)) {
        const hint = /^[#&+!]/.test(name) ? '' : ' (channel names start with #, written %23 in a path)';
        throw notFound('channel_not_found', `No ${view === 'public' ? 'visible ' : ''}channel named ${name}${hint}`);
      }
      const top = topOf(request);
      const { activity, day, date, now } = today();
      const counted = day ? activity.channelOn(day, channel.name) : undefined;
      // A count the collector has not heard of yet (it notes each as the model announces it) is the record now.
      const stored = records().channel(channel.name);
      const record = stored && stored.users >= channel.users ? stored : { users: channel.users, at: now.getTime() };
      const members = channel.joined ? countedUsers(view, channel.members.keys()) : null;
      return {
        channel: {
          name: channel.name,
          topic: channel.topic,
          users: channel.users,
          peak_users: Math.max(channel.users, counted?.peakUsers ?? 0),
          record_users: record.users,
          record_users_at: new Date(record.at).toISOString(),
          modes: channel.modes,
          created_at: channel.createdAt,
          ...(view === 'token' ? { hidden: channel.hidden } : {}),
        },
        date,
        time_zone: activity.timeZone.name,
        lines_counted: channel.joined,
        lines_today: counted ? counted.lines : channel.joined ? 0 : null,
        hourly_lines: counted?.hourly ? [...counted.hourly] : channel.joined || counted ? [...EMPTY_HOURS] : null,
        top_users_today: day ? activity.topSpeakers(day, channel.name, top) : [],
        member_clients:
          members &&
          shares(
            members,
            top,
            (user) => user.client,
            (client) => ({ client }),
          ),
        member_countries:
          members &&
          shares(
            members,
            top,
            (user) => user.countryCode,
            (code) => ({ country_code: code, country: countryName(code) }),
          ),
      };
    },
  };
}

/** `user/:nick/`: a user's profile; in the public view, without the lines said in hidden channels. */
export function userEndpoint(context: NetstatsContext): Endpoint {
  const { model, today } = context;
  return {
    name: 'user',
    path: '/user/:nick/',
    summary: 'User profile: overview and hourly activity',
    response: (view) => userProfileSchemas[view],
    handler(request, view): UserProfile {
      requireReady(model);
      const nick = request.params.nick ?? '';
      const { activity, day, date } = today();
      const user = model.users.get(nick);
      const counted = day ? activity.nickOn(day, nick) : undefined;
      const hourly = counted?.hourly ? [...counted.hourly] : [...EMPTY_HOURS];
      let lines = counted?.lines ?? 0;
      if (view === 'public' && counted) {
        lines -= counted.hiddenLines;
        counted.hiddenHourly?.forEach((hidden, hour) => (hourly[hour]! -= hidden));
      }
      const shown = user ? view === 'token' || isPublicUser(user) : lines > 0;
      if (!shown) throw notFound('user_not_found', `No user named ${nick} is online or was active today`);
      const countryCode = user?.countryCode ?? null;
      const profile = {
        nick: user?.nick ?? counted?.nick ?? nick,
        online: user !== undefined,
        server: user?.server ?? null,
        channels: user ? channelNamesOf(user, view === 'token') : [],
        away: user?.away ?? false,
        is_operator: user?.isOperator ?? false,
        client: user?.client ?? null,
        client_version: user?.clientVersion ?? null,
        country_code: countryCode,
        country: countryCode === null ? null : countryName(countryCode),
      };
      const sensitive =
        view === 'token'
          ? {
              ident: user?.ident ?? null,
              host: user?.host ?? null,
              hostmask: user ? hostmaskOf(user) : null,
              real_host: user?.realHost ?? null,
              ip: user?.ip ?? null,
              realname: user?.realname ?? null,
              account: user?.account ?? null,
            }
          : {};
      return {
        user: { ...profile, ...sensitive },
        date,
        time_zone: activity.timeZone.name,
        lines_today: lines,
        hourly_activity: hourly,
      };
    },
  };
}
