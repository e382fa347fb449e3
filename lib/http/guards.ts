/**
 * A route's own guards (types.ts, {@link RouteGuard}): checked when the route is registered (routes.ts),
 * run at their points by the pipeline (stages.ts), and what they found kept for the handler.
 */
import type {
  ApiRequest,
  ApiResponse,
  GuardFindings,
  GuardOutcome,
  GuardPoint,
  RouteDefinition,
  RouteGuard,
} from './types.js';

/** A route's guards by the point they run at, in the order the route lists them. */
export interface GuardsByPoint {
  readonly request: readonly RouteGuard[];
  readonly body: readonly RouteGuard[];
}

const POINTS: readonly GuardPoint[] = ['request', 'body'];

/**
 * The route's guards by point; throws, naming the route, its plugin and the guard, on a guard without a
 * name or a known point, a name listed twice, or a guard listed before (or without) a guard it needs.
 */
export function guardsByPoint(plugin: string, route: RouteDefinition): GuardsByPoint | undefined {
  const guards = route.guards ?? [];
  if (guards.length === 0) return undefined;
  const culprit = `route ${route.method} ${route.path} of plugin "${plugin}"`;
  const listed = new Set<RouteGuard>();
  const names = new Set<string>();
  for (const guard of guards) {
    if (typeof guard.name !== 'string' || guard.name === '') throw new Error(`A guard of ${culprit} has no name`);
    if (!POINTS.includes(guard.point)) {
      throw new Error(
        `Guard "${guard.name}" of ${culprit} runs at ${JSON.stringify(guard.point)}; its point must be "request" or "body"`,
      );
    }
    if (names.has(guard.name)) throw new Error(`Guard "${guard.name}" is listed twice on ${culprit}`);
    for (const needed of guard.needs ?? []) {
      if (!listed.has(needed)) {
        throw new Error(
          `Guard "${guard.name}" of ${culprit} needs guard "${needed.name}": list "${needed.name}" before it`,
        );
      }
      if (POINTS.indexOf(needed.point) > POINTS.indexOf(guard.point)) {
        throw new Error(
          `Guard "${guard.name}" of ${culprit} runs before the body is read, but needs guard "${needed.name}", which runs after`,
        );
      }
    }
    listed.add(guard);
    names.add(guard.name);
  }
  return {
    request: guards.filter((guard) => guard.point === 'request'),
    body: guards.filter((guard) => guard.point === 'body'),
  };
}

/** What a request's guards found, for the guards after them and the handler. */
export class Findings implements GuardFindings {
  private readonly values = new Map<RouteGuard, unknown>();

  constructor(private readonly route: RouteDefinition) {}

  get<Found>(guard: RouteGuard<Found>): Found {
    if (!this.values.has(guard)) {
      const { method, path } = this.route;
      throw new Error(
        `Route ${method} ${path} reads what guard "${guard.name}" found, but that guard did not run for it: list it in the route's guards`,
      );
    }
    // The value was put there by this very guard's check, whose outcome is typed by Found.
    return this.values.get(guard) as Found;
  }

  set(guard: RouteGuard, value: unknown): void {
    this.values.set(guard, value);
  }
}

export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** What running a route's guards reads and writes of a request on its way (the pipeline's exchange). */
export interface GuardedRequest {
  readonly request: ApiRequest | undefined;
  readonly findings: Findings | undefined;
  /** The guard running now, or the last one that ran, for the failure log. */
  guard: RouteGuard | undefined;
  answer: ApiResponse | undefined;
}

/**
 * Take one guard's outcome into the exchange: what it found, or its answer (then true: no later stage runs).
 * Anything else is the guard's bug, thrown as such.
 */
function settle(exchange: GuardedRequest, guard: RouteGuard, outcome: GuardOutcome<unknown> | undefined): boolean {
  if (typeof outcome === 'object' && outcome !== null) {
    if ('answer' in outcome) {
      exchange.answer = outcome.answer;
      return true;
    }
    if ('found' in outcome) {
      exchange.findings!.set(guard, outcome.found);
      return false;
    }
  }
  throw new Error(
    `Guard "${guard.name}" must give { found } to let the request on or { answer } to answer it; it gave ${String(outcome)}`,
  );
}

/**
 * Run `guards` on the exchange from `index`, in order: at once while each answers at once, else from the
 * first promise on. Each guard is `exchange.guard` while it runs (the failure log names it); the run stops at
 * the first guard that answers or throws.
 */
export function runGuards(
  exchange: GuardedRequest,
  route: RouteDefinition,
  guards: readonly RouteGuard[],
  index = 0,
): void | Promise<void> {
  const request = exchange.request!;
  for (; index < guards.length; index++) {
    const guard = guards[index]!;
    exchange.guard = guard;
    const outcome = guard.check(request, exchange.findings!, route);
    if (isPromiseLike(outcome)) {
      const next = index + 1;
      return Promise.resolve(outcome).then((settled) => {
        exchange.guard = guard;
        if (!settle(exchange, guard, settled)) return runGuards(exchange, route, guards, next);
      });
    }
    if (settle(exchange, guard, outcome)) return;
  }
}
