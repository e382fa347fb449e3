/** Channels the bot knows of, keyed by folded name. */
import type { ModelSlice } from './slice.js';
import type { User } from './users.js';

export interface Channel {
  name: string;
  /** User count as the network reports it (LIST), or the member count where the bot is in it. */
  users: number;
  topic: string;
  topicSetBy: string | null;
  topicSetAt: string | null;
  createdAt: string | null;
  /** Channel modes without parameters that carry secrets (no key). */
  modes: string;
  /** Secret (+s), private (+p), or only known to the bot as an operator: never public. */
  hidden: boolean;
  /** Whether the bot is in the channel (then members are live). */
  joined: boolean;
  /**
   * Member → their prefixes (`@`, `+`, `@+` with multi-prefix). Keyed by the user object, which a
   * nick change keeps: a rename changes nothing here, and a line finds a member without comparing names.
   */
  members: Map<User, string>;
}

export type ChannelFields = Partial<Omit<Channel, 'name' | 'members'>>;

export class ChannelsSlice implements ModelSlice {
  readonly name = 'channels';
  private readonly byName = new Map<string, Channel>();

  constructor(private readonly fold: (name: string) => string) {}

  get size(): number {
    return this.byName.size;
  }

  get(name: string): Channel | undefined {
    return this.byName.get(this.fold(name));
  }

  /** The channel whose folded name is `key` (a caller that folded the name already saves folding it again). */
  byKey(key: string): Channel | undefined {
    return this.byName.get(key);
  }

  all(): IterableIterator<Channel> {
    return this.byName.values();
  }

  /**
   * @internal changed through NetworkModel, which emits the change
   * @param key `name` folded, when the caller has it already
   */
  upsert(name: string, fields: ChannelFields, key = this.fold(name)): Channel {
    let channel = this.byName.get(key);
    if (!channel) {
      channel = {
        name,
        users: 0,
        topic: '',
        topicSetBy: null,
        topicSetAt: null,
        createdAt: null,
        modes: '',
        hidden: false,
        joined: false,
        members: new Map(),
      };
      this.byName.set(key, channel);
    }
    for (const field in fields) {
      const value = fields[field as keyof ChannelFields];
      if (value !== undefined) (channel as unknown as Record<string, unknown>)[field] = value;
    }
    return channel;
  }

  /**
   * @internal
   * @param key `name` folded, when the caller has it already
   */
  delete(name: string, key = this.fold(name)): Channel | undefined {
    const channel = this.byName.get(key);
    this.byName.delete(key);
    return channel;
  }

  /** @internal */
  clear(): void {
    this.byName.clear();
  }
}
