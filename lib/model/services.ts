/**
 * The commands each network service (NickServ, ChanServ, ...) offers, as its HELP lists them.
 * The catalogue is persisted: it describes the services, which rarely change, so after a restart
 * it is served at once, with the time it was read, until the services are asked again.
 */
import type { ModelSlice, Persistence } from './slice.js';

export interface ServiceCommand {
  /** Upper-case command name, e.g. `REGISTER`. */
  name: string;
  /** The one-line description from HELP; null when the service named the command without one. */
  description: string | null;
}

export interface ServiceCommands {
  /** The service's nick as configured, e.g. `NickServ`. */
  service: string;
  commands: ServiceCommand[];
}

/** The stored form; keys are snake_case because they are the file format. */
export interface StoredServices {
  fetched_at: string | null;
  services: { service: string; commands: { name: string; description: string | null }[] }[];
}

export class ServicesSlice implements ModelSlice {
  readonly name = 'services';
  readonly persistence: Persistence<StoredServices> = {
    snapshot: () => this.snapshot(),
    restore: (data) => this.restore(data),
  };
  private byService = new Map<string, ServiceCommands>();
  private fetchedAtValue: string | null = null;

  get size(): number {
    return this.byService.size;
  }

  /** ISO time the command lists were last fetched; null before the first time. */
  get fetchedAt(): string | null {
    return this.fetchedAtValue;
  }

  get(service: string): ServiceCommands | undefined {
    return this.byService.get(service.toLowerCase());
  }

  all(): IterableIterator<ServiceCommands> {
    return this.byService.values();
  }

  /** @internal changed through NetworkModel, which emits the change */
  replace(lists: readonly ServiceCommands[], fetchedAt: string): void {
    this.byService = new Map(lists.map((list) => [list.service.toLowerCase(), list]));
    this.fetchedAtValue = fetchedAt;
  }

  private snapshot(): StoredServices {
    return {
      fetched_at: this.fetchedAtValue,
      services: [...this.byService.values()].map((list) => ({
        service: list.service,
        commands: list.commands.map((command) => ({ name: command.name, description: command.description })),
      })),
    };
  }

  private restore(data: StoredServices): void {
    if (typeof data !== 'object' || data === null || !Array.isArray(data.services)) {
      throw new Error('the "services" slice must be an object with a "services" array');
    }
    const lists: ServiceCommands[] = [];
    for (const stored of data.services) {
      if (typeof stored?.service !== 'string' || !Array.isArray(stored.commands)) {
        throw new Error('each entry of "services" must have a "service" name and a "commands" array');
      }
      const commands = stored.commands.filter(
        (command): command is ServiceCommand =>
          typeof command?.name === 'string' &&
          (typeof command.description === 'string' || command.description === null),
      );
      lists.push({ service: stored.service, commands });
    }
    const fetchedAt =
      typeof data.fetched_at === 'string' && !Number.isNaN(Date.parse(data.fetched_at)) ? data.fetched_at : null;
    // A catalogue without the time it was read would be served as never read: keep neither.
    if (fetchedAt === null) return;
    this.replace(lists, fetchedAt);
  }
}
