/**
 * A routed request runs through named stages, in order: the tier's **guard**, each **hook**, the
 * **body** (read and checked for POST and PATCH), and the route's **handler**; then the answer is
 * written (respond.ts). A stage begins and gives its outcome, or a promise of it; only a promise
 * makes the rest wait, so a request whose stages are all synchronous runs from the socket to the
 * response in one go (the fast path the benchmarks measure).
 */
import {
  checkContentType,
  checkDeclaredLength,
  FORM_MEDIA_TYPE,
  JSON_MEDIA_TYPE,
  parseFormBody,
  parseJsonBody,
  readBody,
} from './body.js';
import { unavailable } from './errors.js';
import { decodeParams } from './routes.js';
import { RoutedRequest, type Exchange, type Stage } from './exchange.js';

export type { Stage, StageName } from './exchange.js';
import type { ApiRequest, ApiResponse, RouteDefinition, TierGuards } from './types.js';

/**
 * Runs before every routed request, after the tier guard (so `request.tokenId` is set on
 * token routes) and before the body is read. Throw an ApiError to refuse (e.g. 429);
 * return headers to add to the response, whatever its outcome.
 */
export type RequestHook = (
  request: ApiRequest,
  route: RouteDefinition,
) => void | Record<string, string> | Promise<void | Record<string, string>>;

/** What the pipeline hands a request to when its stages are done, or when one failed. */
export interface Responder {
  answer(exchange: Exchange): void;
  fail(exchange: Exchange, error: unknown): void;
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

const ignore = (): void => undefined;

/**
 * The tier's guard, from the guards in place when the request comes; a public route without a guard is
 * not checked, a token or staff one is refused.
 */
function guardStage(guards: () => TierGuards | undefined): Stage {
  return {
    name: 'guard',
    begin(exchange) {
      const { route } = exchange.entry!;
      if (route.admit?.(exchange.request!)) return undefined;
      const guard = guards()?.[route.tier];
      if (route.tier === 'public' && !guard) return undefined;
      if (!guard) {
        throw unavailable(
          `${route.tier === 'token' ? 'Token' : 'Staff'} routes are not available yet: no access guard is configured`,
        );
      }
      return guard(exchange.request!, route);
    },
    take: ignore,
  };
}

/** A plugin's hook; the headers it returns ride on the answer. */
function hookStage(hook: RequestHook): Stage {
  return {
    name: 'hook',
    begin: (exchange) => {
      // From here on, a hook has seen the request (and a rate limit counted what the front served).
      exchange.hooksSeen = true;
      return hook(exchange.request!, exchange.entry!.route);
    },
    take(exchange, outcome) {
      if (outcome === undefined || outcome === null) return;
      exchange.hookHeaders = Object.assign(exchange.hookHeaders ?? {}, outcome as Record<string, string>);
    },
  };
}

/**
 * A POST or PATCH body: JSON (checked by the route's schema) or, on a route marked `form`, an HTML form;
 * within the limit, and asked for (100 Continue) only when wanted.
 */
function bodyStage(bodyLimit: number): Stage {
  return {
    name: 'body',
    begin(exchange) {
      const { method, form } = exchange.entry!.route;
      if (method !== 'POST' && method !== 'PATCH') return undefined;
      checkContentType(exchange.raw, form ? FORM_MEDIA_TYPE : JSON_MEDIA_TYPE);
      if (exchange.awaitingContinue) {
        // Ask for the body only once it is wanted, so a client refused (401, 413, 415, ...) never sends it.
        checkDeclaredLength(exchange.raw, bodyLimit);
        exchange.awaitingContinue = false;
        exchange.response.writeContinue();
      }
      return readBody(exchange.raw, bodyLimit);
    },
    take(exchange, outcome) {
      if (outcome === undefined) return;
      const { entry } = exchange;
      exchange.request!.body = entry!.route.form
        ? parseFormBody(outcome as Buffer)
        : parseJsonBody(outcome as Buffer, entry!.validateBody);
    },
  };
}

const handlerStage: Stage = {
  name: 'handler',
  begin: (exchange) => exchange.entry!.route.handler(exchange.request!),
  take(exchange, outcome) {
    exchange.answer = outcome as ApiResponse;
  },
};

/** The stages every routed request runs, rebuilt when a hook is added. */
export class Pipeline {
  /** Where the tiers' guards come from, asked at each request; none until {@link setGuards}. */
  private guards: () => TierGuards | undefined = () => undefined;
  private readonly guardStage = guardStage(() => this.guards());
  private readonly hooks: RequestHook[] = [];
  private stages: readonly Stage[];
  /** The operations routes' stages: no hook (no rate limit) runs for a health probe or a metrics scrape. */
  private readonly operationsStages: readonly Stage[];

  constructor(
    private readonly bodyLimit: number,
    private readonly responder: Responder,
  ) {
    this.stages = this.build();
    this.operationsStages = [this.guardStage, bodyStage(this.bodyLimit), handlerStage];
  }

  setGuards(guards: () => TierGuards | undefined): void {
    this.guards = guards;
  }

  addHook(hook: RequestHook): void {
    this.hooks.push(hook);
    this.stages = this.build();
  }

  private build(): readonly Stage[] {
    return [this.guardStage, ...this.hooks.map(hookStage), bodyStage(this.bodyLimit), handlerStage];
  }

  /** Run a routed request (its `entry` set) through every stage, then hand it to the responder. */
  start(exchange: Exchange): void {
    exchange.stages = exchange.entry!.route.document === 'operations' ? this.operationsStages : this.stages;
    try {
      const { entry } = exchange;
      // The raw (still encoded) match is decoded once here, so a malformed escape is told apart from a literal "%".
      const params = entry!.parameterised ? decodeParams(entry!.pattern.exec(exchange.path)?.groups) : {};
      exchange.request = new RoutedRequest(
        entry!.route.method,
        exchange.path,
        exchange.search,
        params,
        exchange.raw.headers,
        exchange.ip,
        exchange.secure,
        exchange.front,
      );
    } catch (error) {
      this.responder.fail(exchange, error);
      return;
    }
    this.run(exchange, 0);
  }

  /**
   * Run the stages from `index`. A stage whose outcome is a promise suspends the run, which resumes
   * at the next stage once it settles.
   */
  private run(exchange: Exchange, index: number): void {
    const { stages } = exchange;
    try {
      for (; index < stages.length; index++) {
        const stage = stages[index]!;
        exchange.stage = stage.name;
        const outcome = stage.begin(exchange);
        if (isPromiseLike(outcome)) {
          this.suspend(exchange, index, outcome);
          return;
        }
        stage.take(exchange, outcome);
      }
      // Inside the same net: a handler's answer that cannot be written (none at all, a status Node refuses)
      // is a logged 500, not an exception out of the server.
      this.responder.answer(exchange);
    } catch (error) {
      this.responder.fail(exchange, error);
    }
  }

  private suspend(exchange: Exchange, index: number, outcome: PromiseLike<unknown>): void {
    // A hand-written thenable may call back more than once; only its first settlement counts.
    let settledOnce = false;
    outcome.then(
      (settled) => {
        if (settledOnce) return;
        settledOnce = true;
        try {
          exchange.stages[index]!.take(exchange, settled);
        } catch (error) {
          this.responder.fail(exchange, error);
          return;
        }
        this.run(exchange, index + 1);
      },
      (error: unknown) => {
        if (settledOnce) return;
        settledOnce = true;
        this.responder.fail(exchange, error);
      },
    );
  }
}
