/**
 * What the bot's model says, through its HTTP API (docs/http-api.md): its own counts of users
 * (`/api/irc/users/`, token), channels (`/api/irc/channels/`, public: secret and private ones and
 * those whose modes are not known yet are left out; and all it holds, from its metrics) and servers, and a
 * channel's members.
 */
import { casefold } from '../../lib/irc/casemapping.js';

export interface ModelCounts {
  users: number;
  /** The public channel list's count. */
  channels: number;
  servers: number;
  /**
   * Every channel the model holds, hidden ones too (secret, private, or formed a moment ago and its modes not
   * known yet), as its metrics say (`irc_bot_model_channels`); null where they cannot be read.
   */
  channelsHeld: number | null;
}

interface Page {
  count: number;
}

export class BotApi {
  constructor(
    readonly url: string,
    private readonly token: string,
  ) {}

  private async get<T>(path: string, withToken = false): Promise<{ status: number; body: T | null }> {
    const response = await fetch(`${this.url}${path}`, {
      headers: withToken ? { Authorization: `Token ${this.token}` } : {},
    });
    const text = await response.text();
    return { status: response.status, body: response.ok ? (JSON.parse(text) as T) : null };
  }

  /** The model's counts; null while the bot is not connected or not synced (503), or not listening yet. */
  async counts(): Promise<ModelCounts | null> {
    try {
      const [users, channels, servers, channelsHeld] = await Promise.all([
        this.get<Page>('/api/irc/users/?limit=1', true),
        this.get<Page>('/api/irc/channels/?limit=1'),
        this.get<Page>('/api/irc/servers/?limit=1'),
        this.channelsHeld(),
      ]);
      if (!users.body || !channels.body || !servers.body) return null;
      return { users: users.body.count, channels: channels.body.count, servers: servers.body.count, channelsHeld };
    } catch {
      return null;
    }
  }

  /** Every channel the model holds, from the metrics plugin's `irc_bot_model_channels`; null without it. */
  private async channelsHeld(): Promise<number | null> {
    const response = await fetch(`${this.url}/metrics`).catch(() => null);
    if (!response?.ok) return null;
    let held: number | null = null;
    for (const match of (await response.text()).matchAll(/^irc_bot_model_channels\{[^}]*\} (\d+)$/gm)) {
      held = (held ?? 0) + Number(match[1]);
    }
    return held;
  }

  /** A channel's member count and members (folded nicks) as the model has them; null if unknown. */
  async channel(name: string): Promise<{ users: number; members: string[] } | null> {
    const answer = await this.get<{ users: number; members: { nick: string }[] }>(
      `/api/irc/channels/${encodeURIComponent(name)}/`,
    );
    if (!answer.body) return null;
    return { users: answer.body.users, members: answer.body.members.map((member) => casefold(member.nick)) };
  }

  /** Every user's nick in the model (folded), page by page. */
  async nicks(): Promise<string[]> {
    const nicks: string[] = [];
    for (let offset = 0; ; offset += 1000) {
      const page = await this.get<Page & { results: { nick: string }[] }>(
        `/api/irc/users/?limit=1000&offset=${offset}`,
        true,
      );
      if (!page.body) throw new Error(`/api/irc/users/ answered ${page.status}`);
      nicks.push(...page.body.results.map((user) => casefold(user.nick)));
      if (page.body.results.length < 1000) return nicks;
    }
  }

  /** Every visible channel in the model (folded name) with its user count, page by page. */
  async channelCounts(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (let offset = 0; ; offset += 1000) {
      const page = await this.get<Page & { results: { name: string; users: number }[] }>(
        `/api/irc/channels/?limit=1000&offset=${offset}`,
      );
      if (!page.body) throw new Error(`/api/irc/channels/ answered ${page.status}`);
      for (const channel of page.body.results) counts.set(casefold(channel.name), channel.users);
      if (page.body.results.length < 1000) return counts;
    }
  }

  /** Every visible channel's name in the model (folded), page by page. */
  async channelNames(): Promise<string[]> {
    const names: string[] = [];
    for (let offset = 0; ; offset += 1000) {
      const page = await this.get<Page & { results: { name: string }[] }>(
        `/api/irc/channels/?limit=1000&offset=${offset}`,
      );
      if (!page.body) throw new Error(`/api/irc/channels/ answered ${page.status}`);
      names.push(...page.body.results.map((channel) => casefold(channel.name)));
      if (page.body.results.length < 1000) return names;
    }
  }

  /** How many history points the bot keeps, and the oldest one's time. */
  async history(): Promise<{ count: number; oldest: string | null }> {
    const answer = await this.get<Page & { results: { time: string }[] }>('/network/data/history/?limit=1');
    return { count: answer.body?.count ?? 0, oldest: answer.body?.results[0]?.time ?? null };
  }
}
