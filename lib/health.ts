/**
 * `GET /healthz` and `GET /readyz`, for a process supervisor, a load balancer or an orchestrator.
 * Alive: the process answers. Ready: connected to IRC, synced at least once since, and the store's
 * last writes succeeded; otherwise a 503 saying why. Both are operations routes: never cached, never
 * rate limited, not in the OpenAPI document.
 */
import { ApiError } from './http/errors.js';
import type { RouteDefinition } from './http/types.js';
import type { NetworkModel } from './model/network.js';

export interface HealthSources {
  model: NetworkModel;
  /** Why the store's last write failed, or undefined. */
  storeError: () => string | undefined;
  clock?: () => Date;
}

const open = { admit: () => true, document: 'operations', tier: 'public', method: 'GET' } as const;

export function healthRoutes({ model, storeError, clock = () => new Date() }: HealthSources): RouteDefinition[] {
  const started = clock().getTime();
  return [
    {
      ...open,
      path: '/healthz',
      name: 'healthz',
      summary: 'Alive: the process answers',
      handler: () => ({
        body: { status: 'alive', uptime_seconds: Math.round((clock().getTime() - started) / 1000) },
      }),
    },
    {
      ...open,
      path: '/readyz',
      name: 'readyz',
      summary: 'Ready: connected to IRC, synced once, store writable',
      handler: () => {
        const { connected } = model;
        const { syncedAt } = model.stats;
        const store = storeError();
        const problems: { field: string; message: string }[] = [];
        if (!connected) problems.push({ field: 'irc', message: 'not connected to IRC' });
        else if (!model.ready) problems.push({ field: 'sync', message: 'connected, the first sync has not finished' });
        // The reason names the file and the system's error: it is in the log, not in a public answer.
        if (store !== undefined) {
          problems.push({ field: 'store', message: "the store's last write failed (the bot's log says why)" });
        }
        if (problems.length > 0) {
          throw new ApiError(
            503,
            'not_ready',
            `Not ready: ${problems.map((problem) => problem.message).join('; ')}`,
            problems,
          );
        }
        return { body: { status: 'ready', irc: 'connected', synced_at: syncedAt, store: 'writable' } };
      },
    },
  ];
}
