/** Linked servers, keyed by lower-cased name (server names are hostnames). */
import type { ModelSlice } from './slice.js';

export interface Server {
  name: string;
  description: string;
  hops: number;
  /** null for the root of the tree. */
  uplink: string | null;
  users: number | null;
  isServices: boolean;
  latencyMs: number | null;
  measuredAt: string | null;
}

export type ServerFields = Partial<Omit<Server, 'name'>>;

export class ServersSlice implements ModelSlice {
  readonly name = 'servers';
  private readonly byName = new Map<string, Server>();
  private readonly splitServices = new Set<string>();

  get size(): number {
    return this.byName.size;
  }

  get(name: string): Server | undefined {
    return this.byName.get(name.toLowerCase());
  }

  all(): IterableIterator<Server> {
    return this.byName.values();
  }

  /**
   * The services servers that split from the network on this connection, while no services server is
   * linked (under any name): while one is listed, whatever needs services on IRC (SASL) cannot work.
   */
  get servicesSplit(): readonly string[] {
    return [...this.splitServices];
  }

  /** @internal changed through NetworkModel, which emits the change */
  upsert(name: string, fields: ServerFields): Server {
    const key = name.toLowerCase();
    let server = this.byName.get(key);
    if (!server) {
      server = {
        name,
        description: '',
        hops: 0,
        uplink: null,
        users: null,
        isServices: false,
        latencyMs: null,
        measuredAt: null,
      };
      this.byName.set(key, server);
    }
    for (const [field, value] of Object.entries(fields) as [keyof ServerFields, never][]) {
      if (value !== undefined) server[field] = value;
    }
    // A services server is linked (again, or under another name): services can answer.
    if (server.isServices) this.splitServices.clear();
    return server;
  }

  /** @internal */
  delete(name: string): Server | undefined {
    const key = name.toLowerCase();
    const server = this.byName.get(key);
    if (!server) return undefined;
    this.byName.delete(key);
    const servicesLeft = [...this.byName.values()].some((other) => other.isServices);
    if (server.isServices && !servicesLeft) this.splitServices.add(key);
    return server;
  }

  /** @internal */
  clear(): void {
    this.byName.clear();
    this.splitServices.clear();
  }
}
