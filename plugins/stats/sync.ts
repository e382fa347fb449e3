/**
 * The full sync: the network's own numbers (LUSERS), its server tree (LINKS),
 * its channels (LIST) and its users (WHO, with WHOX when the server has it).
 * Each query is one request through the paced queue, so the bot never floods.
 */
import type { IrcMessage, IrcPort } from '../../lib/irc/port.js';
import type { Logger } from '../../lib/logger.js';
import type { NetworkModel } from '../../lib/model/network.js';
import type { StatsConfig } from './schema.js';

export interface SyncContext {
  irc: IrcPort;
  model: NetworkModel;
  logger: Logger;
  config: StatsConfig;
}

/** WHOX token that marks our own WHO replies (irc-framework would drop them otherwise). */
const WHOX_TOKEN = '77';
const WHOX_FIELDS = '%tcuihsnfar';

const isNumeric = (...codes: string[]) => (message: IrcMessage) => codes.includes(message.command);

function numberFrom(text: string | undefined, pattern: RegExp): number | null {
  const match = text ? pattern.exec(text) : null;
  return match ? Number(match[1]) : null;
}

/** LUSERS: users, invisible, channels, operators, servers, max users — as the network counts them. */
export async function syncLusers({ irc, model }: SyncContext): Promise<void> {
  const lines = await irc.request({
    send: ['LUSERS'],
    reply: isNumeric('251', '252', '253', '254', '255', '265', '266'),
    end: isNumeric('266'),
  });
  const byCode = new Map(lines.map((line) => [line.command, line]));
  const text251 = byCode.get('251')?.params.at(-1);
  const global = byCode.get('266');
  // 266 is `266 me [current max] :Current global users: N  Max: M`
  const current = global && global.params.length >= 4 ? Number(global.params[1]) : numberFrom(global?.params.at(-1), /users:\s*(\d+)/i);
  const max = global && global.params.length >= 4 ? Number(global.params[2]) : numberFrom(global?.params.at(-1), /max:\s*(\d+)/i);
  const visible = numberFrom(text251, /There are (\d+) users/i);
  const invisible = numberFrom(text251, /(\d+) invisible/i) ?? 0;
  model.updateStats({
    users: current ?? (visible === null ? null : visible + invisible),
    invisible,
    servers: numberFrom(text251, /on (\d+) servers?/i),
    operators: Number(byCode.get('252')?.params[1] ?? 0),
    channels: Number(byCode.get('254')?.params[1] ?? 0),
    maxUsers: max,
  });
}

/** LINKS: the server tree. `364 me <server> <uplink> :<hops> <description>` */
export async function syncLinks({ irc, model, config }: SyncContext): Promise<void> {
  const lines = await irc.request({ send: ['LINKS'], reply: isNumeric('364'), end: isNumeric('365') });
  const seen = new Set<string>();
  for (const line of lines) {
    if (line.command !== '364') continue;
    const [, name, uplink, info = ''] = line.params;
    if (!name) continue;
    const space = info.indexOf(' ');
    const hops = Number(space < 0 ? info : info.slice(0, space));
    const description = space < 0 ? '' : info.slice(space + 1);
    seen.add(name.toLowerCase());
    model.upsertServer(name, {
      description,
      hops: Number.isFinite(hops) ? hops : 0,
      uplink: hops === 0 || !uplink || uplink.toLowerCase() === name.toLowerCase() ? null : uplink,
      isServices: config.services_servers.some((server) => server.toLowerCase() === name.toLowerCase()),
    });
  }
  for (const server of [...model.servers.all()]) if (!seen.has(server.name.toLowerCase())) model.removeServer(server.name);
}

/** LIST: every channel the network lists, with its user count and topic. */
export async function syncList({ irc, model }: SyncContext): Promise<void> {
  const lines = await irc.request({ send: ['LIST'], reply: isNumeric('322'), end: isNumeric('323'), timeoutMs: 60000 });
  const listed = new Set<string>();
  for (const line of lines) {
    if (line.command !== '322') continue;
    const [, name, users = '0', topic = ''] = line.params;
    if (!name) continue;
    listed.add(model.fold(name));
    const channel = model.channels.get(name);
    // InspIRCd puts the modes in front of the topic for opers: "[+nst] topic"
    const modeMatch = /^\[\+([A-Za-z]*)[^\]]*\] ?(.*)$/s.exec(topic);
    const fields = modeMatch ? { topic: modeMatch[2] ?? '' } : { topic };
    model.upsertChannel(name, {
      ...fields,
      users: channel?.joined ? channel.members.size : Number(users),
      ...(modeMatch && !channel?.joined
        ? {
            modes: modeMatch[1] ? `+${[...modeMatch[1]].sort().join('')}` : '',
            hidden: /[sp]/.test(modeMatch[1] ?? ''),
          }
        : {}),
    });
  }
  for (const channel of [...model.channels.all()]) {
    if (!listed.has(model.fold(channel.name)) && !channel.joined) model.removeChannel(channel.name);
  }
}

/** WHO: every user the bot may see (all of them as an oper), with WHOX fields when offered. */
export async function syncWho({ irc, model }: SyncContext): Promise<void> {
  const whox = irc.state.isupport.has('WHOX');
  const lines = await irc.request({
    send: whox ? ['WHO', '*', `${WHOX_FIELDS},${WHOX_TOKEN}`] : ['WHO', '*'],
    reply: (line) => (whox ? line.command === '354' && line.params[1] === WHOX_TOKEN : line.command === '352'),
    end: isNumeric('315'),
    timeoutMs: 120000,
  });
  const seen = new Set<string>();
  for (const line of lines) {
    if (line.command === '354') {
      // 354 me 77 <channel> <ident> <ip> <host> <server> <nick> <flags> <account> :<realname>
      const [, , , ident, ip, host, server, nick, flags = '', account, realname] = line.params;
      if (!nick) continue;
      seen.add(model.fold(nick));
      model.upsertUser(nick, {
        ident: ident ?? null,
        host: host ?? null,
        ip: ip && ip !== '255.255.255.255' && ip !== '0.0.0.0' ? ip : null,
        server: server ?? null,
        away: flags.startsWith('G'),
        isOperator: flags.includes('*'),
        account: !account || account === '0' ? null : account,
        realname: realname ?? null,
      });
    } else if (line.command === '352') {
      // 352 me <channel> <ident> <host> <server> <nick> <flags> :<hops> <realname>
      const [, , ident, host, server, nick, flags = '', trailing = ''] = line.params;
      if (!nick) continue;
      seen.add(model.fold(nick));
      model.upsertUser(nick, {
        ident: ident ?? null,
        host: host ?? null,
        server: server ?? null,
        away: flags.startsWith('G'),
        isOperator: flags.includes('*'),
        realname: trailing.replace(/^\d+ /, ''),
      });
    }
  }
  // Users no longer on the network; users only seen in our channels stay (a non-oper WHO * hides +i users).
  for (const user of [...model.users.all()]) {
    if (!seen.has(model.fold(user.nick)) && user.channels.size === 0) model.removeUser(user.nick);
  }
}

/** Mark the servers services run on: those hosting a configured service nick. */
export function markServicesServers({ model, config }: SyncContext): void {
  const servers = new Set<string>();
  for (const nick of ['NickServ', ...config.services]) {
    const server = model.users.get(nick)?.server;
    if (server) servers.add(server.toLowerCase());
  }
  for (const server of model.servers.all()) {
    if (servers.has(server.name.toLowerCase()) && !server.isServices) model.upsertServer(server.name, { isServices: true });
  }
}

/** Join the configured channels, or with `*` the biggest visible ones up to max_channels. */
export function joinChannels({ irc, model, config }: SyncContext): void {
  const wanted =
    config.join === '*'
      ? [...model.channels.all()]
          .filter((channel) => !channel.hidden)
          .sort((a, b) => b.users - a.users || a.name.localeCompare(b.name))
          .slice(0, config.max_channels)
          .map((channel) => channel.name)
      : config.join;
  const missing = wanted.filter((name) => !model.channels.get(name)?.joined);
  // Several channels per JOIN line, kept well under the 512-byte line limit.
  for (let start = 0; start < missing.length; start += 10) irc.send('JOIN', missing.slice(start, start + 10).join(','));
}

/** The whole sync, in order; marks the model synced when it completes. */
export async function fullSync(context: SyncContext): Promise<void> {
  const started = Date.now();
  await syncLusers(context);
  await syncLinks(context);
  await syncList(context);
  await syncWho(context);
  markServicesServers(context);
  context.model.markSynced(context.irc.state.isOperator);
  joinChannels(context);
  context.logger.info('synced', {
    users: context.model.users.size,
    channels: context.model.channels.size,
    servers: context.model.servers.size,
    as_operator: context.irc.state.isOperator,
    ms: Date.now() - started,
  });
}
