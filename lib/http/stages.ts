/**
 * A routed request runs through named stages, in order: the tier's **guard**, each **hook**, the route's
 * own **guards** that run before the body, the **body** (read and checked for POST and PATCH), the route's
 * guards that run after it, and the route's **handler**; then the answer is written (respond.ts). A stage
 * begins and gives its outcome, or a promise of it; only a promise makes the rest wait, so a request whose
 * stages are all synchronous runs from the socket to the response in one go (the fast path the benchmarks
 * measure). A route without guards of its own has no guards stages at all; one whose guard answers (a
 * refusal page) skips the stages after it.
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
import { ApiError, unavailable } from './errors.js';
import { Findings, isPromiseLike, runGuards } from './guards.js';
import { decodeParams } from './routes.js';
import { RoutedRequest, type Exchange, type Stage } from './exchange.js';

export type { Stage, StageName } from './exchange.js';
import type { ApiRequest, ApiResponse, GuardPoint, RouteDefinition, TierGuards } from './types.js';

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
      const headers = outcome as Record<string, string>;
      // The first hook's headers are kept as given (never changed); a second hook's are merged into a copy.
      exchange.hookHeaders = exchange.hookHeaders ? { ...exchange.hookHeaders, ...headers } : headers;
    },
  };
}

/** The route's own guards of one point, in the order it lists them. */
function routeGuardsStage(point: GuardPoint): Stage {
  return {
    name: 'guards',
    begin(exchange) {
      const { route, guards } = exchange.entry!;
      return runGuards(exchange, route, guards![point]);
    },
    take: ignore,
  };
}

const requestGuardsStage = routeGuardsStage('request');
const bodyGuardsStage = routeGuardsStage('body');

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
  begin: (exchange) =>
    exchange.entry!.route.handler(exchange.request!, exchange.findings ?? exchange.entry!.noFindings),
  take(exchange, outcome) {
    exchange.answer = outcome as ApiResponse;
  },
};

/** The stages every routed request runs, rebuilt when a hook is added. */
export class Pipeline {
  /** Where the tiers' guards come from, asked at each request; none until {@link setGuards}. */
  private guards: () => TierGuards | undefined = () => undefined;
  private readonly guardStage = guardStage(() => this.guards());
  private readonly bodyStage: Stage;
  private readonly hooks: RequestHook[] = [];
  private stages: readonly Stage[] = [];
  /** The stages of a route with guards of its own. */
  private guardedStages: readonly Stage[] = [];
  /** The operations routes' stages: no hook (no rate limit) runs for a health probe or a metrics scrape. */
  private readonly operationsStages: readonly Stage[];
  private readonly guardedOperationsStages: readonly Stage[];

  constructor(
    bodyLimit: number,
    private readonly responder: Responder,
  ) {
    this.bodyStage = bodyStage(bodyLimit);
    this.build();
    this.operationsStages = [this.guardStage, this.bodyStage, handlerStage];
    this.guardedOperationsStages = [this.guardStage, requestGuardsStage, this.bodyStage, bodyGuardsStage, handlerStage];
  }

  setGuards(guards: () => TierGuards | undefined): void {
    this.guards = guards;
  }

  addHook(hook: RequestHook): void {
    this.hooks.push(hook);
    this.build();
  }

  private build(): void {
    const hooks = this.hooks.map(hookStage);
    this.stages = [this.guardStage, ...hooks, this.bodyStage, handlerStage];
    this.guardedStages = [this.guardStage, ...hooks, requestGuardsStage, this.bodyStage, bodyGuardsStage, handlerStage];
  }

  /** Run a routed request (its `entry` set) through every stage, then hand it to the responder. */
  start(exchange: Exchange): void {
    const { entry } = exchange;
    const operations = entry!.route.document === 'operations';
    if (entry!.guards) {
      exchange.stages = operations ? this.guardedOperationsStages : this.guardedStages;
      exchange.findings = new Findings(entry!.route);
    } else {
      exchange.stages = operations ? this.operationsStages : this.stages;
    }
    try {
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
   * at the next stage once it settles. Once there is an answer (a guard gave one), no stage runs.
   */
  private run(exchange: Exchange, index: number): void {
    const { stages } = exchange;
    try {
      for (; index < stages.length && exchange.answer === undefined; index++) {
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
      this.fail(exchange, error);
    }
  }

  /**
   * Answer a failure: an ApiError of the route's own guards or handler with the route's `renderError`
   * when it has one, anything else as the contract says (respond.ts).
   */
  private fail(exchange: Exchange, error: unknown): void {
    const { renderError } = exchange.entry!.route;
    if (!renderError || !(error instanceof ApiError) || (exchange.stage !== 'guards' && exchange.stage !== 'handler')) {
      this.responder.fail(exchange, error);
      return;
    }
    try {
      exchange.answer = renderError(error, exchange.request!);
      this.responder.answer(exchange);
    } catch (failure) {
      this.responder.fail(exchange, failure);
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
          this.fail(exchange, error);
          return;
        }
        this.run(exchange, index + 1);
      },
      (error: unknown) => {
        if (settledOnce) return;
        settledOnce = true;
        this.fail(exchange, error);
      },
    );
  }
}
