/** The commands each network service (NickServ, ChanServ, ...) offers, as its HELP lists them. */
import type { ModelSlice } from './slice.js';

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

export class ServicesSlice implements ModelSlice {
  readonly name = 'services';
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
}
