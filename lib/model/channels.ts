/** Channels the bot knows of, keyed by folded name. */
import type { ModelSlice } from './slice.js';
import type { Channel } from './entities.js';

export type { Channel } from './entities.js';

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
