/**
 * The server tree: LINKS for names, descriptions, hops and uplinks, MAP (where
 * the network allows it) for users per server, and which servers run services.
 */
import type { IrcMessage } from '../../lib/sdk.js';
import type { SyncContext } from './context.js';

/** One RPL_LINKS entry. */
export interface LinkEntry {
  name: string;
  uplink: string | null;
  hops: number;
  description: string;
}

/**
 * RPL_LINKS `364 me <server> <uplink> :<hops> <description>`, the last field read as the server's profile says
 * (`hopsField`: ircd 2.11 puts the server's SID before the description); the root is its own uplink.
 */
export function parseLinksEntry(message: IrcMessage, hopsField: RegExp): LinkEntry | null {
  const [, name, uplink, info = ''] = message.params;
  if (!name) return null;
  const groups = hopsField.exec(info)?.groups;
  const hops = groups?.hops ? Number(groups.hops) : 0;
  const isRoot = hops === 0 || !uplink || uplink.toLowerCase() === name.toLowerCase();
  return { name, uplink: isRoot ? null : uplink, hops, description: groups ? (groups.text ?? '') : info };
}

/**
 * One RPL_MAP line, as the server's profile says its software writes them (`mapLine`, with groups `name` and
 * `users`), e.g. `` `-leaf.test.net (002 InspIRCd-3)  1 [12.50%] ``: tree drawing, the name, an optional
 * `(SID version)` for operators, the user count and a share.
 */
export function parseMapLine(text: string, mapLine: RegExp): { name: string; users: number } | null {
  const groups = mapLine.exec(text)?.groups;
  return groups?.name && groups.users ? { name: groups.name, users: Number(groups.users) } : null;
}

/** LINKS: the server tree. Servers no longer linked are dropped, and their users with them. */
export async function syncLinks({ irc, model, config, urgent }: SyncContext): Promise<void> {
  const lines = await irc.request({
    urgent,
    send: ['LINKS'],
    serial: true,
    reply: (line) => line.command === '364',
    end: (line) => line.command === '365',
  });
  const seen = new Set<string>();
  const configured = new Set(config.services_servers.map((name) => name.toLowerCase()));
  for (const line of lines) {
    const entry = line.command === '364' ? parseLinksEntry(line, irc.state.profile.hopsField) : null;
    if (!entry) continue;
    seen.add(entry.name.toLowerCase());
    const known = model.servers.get(entry.name);
    model.upsertServer(entry.name, {
      description: entry.description,
      hops: entry.hops,
      uplink: entry.uplink,
      isServices: configured.has(entry.name.toLowerCase()) || (known?.isServices ?? false),
    });
  }
  for (const server of [...model.servers.all()]) {
    if (!seen.has(server.name.toLowerCase())) model.removeServer(server.name);
  }
}

/**
 * MAP: users per server, where the network lets the bot ask and the server's profile knows how its lines read
 * (`mapLine`). Without it, an operator's WHO (which sees every user, invisible ones too, where the profile's
 * `operatorWhoSeesInvisible` says so) is counted instead; otherwise the count stays unknown.
 */
export async function syncServerUsers({ irc, model, urgent }: SyncContext): Promise<void> {
  const { profile } = irc.state;
  const counts = profile.mapLine ? await mapCounts({ irc, urgent }, profile.mapLine) : new Map<string, number>();
  if (counts.size === 0 && irc.state.isOperator) {
    for (const user of model.users.all()) {
      const key = user.server?.toLowerCase();
      if (key) counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  for (const server of model.servers.all()) {
    const users = counts.get(server.name.toLowerCase()) ?? null;
    if (server.users !== users) model.upsertServer(server.name, { users });
  }
}

/** The users per server (by lower-cased name) that MAP lists. */
async function mapCounts(
  { irc, urgent }: Pick<SyncContext, 'irc' | 'urgent'>,
  mapLine: RegExp,
): Promise<Map<string, number>> {
  const lines = await irc.request({
    urgent,
    send: ['MAP'],
    serial: true,
    reply: (line) => line.command === '015' || line.command === '006',
    end: (line) => ['017', '007', '481', '421'].includes(line.command),
  });
  const counts = new Map<string, number>();
  for (const line of lines) {
    if (line.command !== '015' && line.command !== '006') continue;
    const entry = parseMapLine(line.params.at(-1) ?? '', mapLine);
    if (entry) counts.set(entry.name.toLowerCase(), entry.users);
  }
  return counts;
}

/**
 * Mark the servers services run on: the configured ones, and the server NickServ is on (asked with WHOIS when WHO
 * did not show it, as it does not to a non-operator; not where the server knows no accounts, the profile's
 * `accounts`, so that no NickServ could serve any).
 */
export async function markServicesServers({ irc, model, config, urgent }: SyncContext): Promise<void> {
  const servers = new Set(config.services_servers.map((name) => name.toLowerCase()));
  for (const nick of new Set(['NickServ', ...config.services])) {
    const server = model.users.get(nick)?.server;
    if (server) servers.add(server.toLowerCase());
  }
  if (!model.users.get('NickServ')?.server && irc.state.profile.accounts) {
    const lines = await irc.request({
      urgent,
      send: ['WHOIS', 'NickServ'],
      reply: (line) => line.command === '312',
      end: (line) => line.command === '318' || line.command === '401',
      timeoutMs: 10000,
    });
    const server = lines.find((line) => line.command === '312')?.params[2];
    if (server) servers.add(server.toLowerCase());
  }
  for (const server of model.servers.all()) {
    const isServices = servers.has(server.name.toLowerCase());
    if (server.isServices !== isServices) model.upsertServer(server.name, { isServices });
  }
}
