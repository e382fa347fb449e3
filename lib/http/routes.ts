/**
 * The route table: what plugins registered, and which route answers a method on a path.
 *
 * A static path is one lookup in a map from the exact path (both slash forms of each static route) to
 * its routes by method; only paths with parameters go to polka's router, which matches them against
 * the compiled patterns in registration order. What each route's answer needs that does not change per
 * request (its `Cache-Control`, its body validator, its guards by point) is worked out here, at registration.
 */
import polka, { type Handler as PolkaHandler } from 'polka';
import { errorMessage } from '../logger.js';
import { compileBodySchema, type BodyValidator } from './body.js';
import { invalidParameter } from './errors.js';
import { Findings, guardsByPoint, type GuardsByPoint } from './guards.js';
import type { RouteDefinition } from './types.js';

/** A registered route and the plugin that owns it. */
export interface RegisteredRoute {
  plugin: string;
  route: RouteDefinition;
}

export interface RouteEntry extends RegisteredRoute {
  pattern: RegExp;
  /** method + pattern with parameter names erased: two routes with the same key collide. */
  key: string;
  /** Whether the path has `:param` segments (and so is matched by `pattern`, not looked up). */
  parameterised: boolean;
  validateBody: BodyValidator | undefined;
  /** `Cache-Control` of a successful answer, by the route's tier and method. */
  cacheControl: string;
  /**
   * How long the HTTP front may reuse an answer, in milliseconds: a public GET's max-age; 0 for any other
   * route, and for a route with guards of its own, whose answer depends on who asks.
   */
  publicMaxAgeMs: number;
  /** The route's own guards by point; undefined when it has none (the pipeline's shorter path). */
  guards: GuardsByPoint | undefined;
  /** What the handler of a route without guards is given: nothing found. */
  noFindings: Findings;
}

/** Seconds a public GET answer may be cached when its route does not say (`RouteDefinition.maxAge`). */
const DEFAULT_MAX_AGE = 10;
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'] as const;

/** A route path as OpenAPI writes it: `/api/irc/channels/:name/` → `/api/irc/channels/{name}/`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Compile a route path (`/api/irc/channels/:name/`) to a case-sensitive pattern with named
 * groups holding the raw (still percent-encoded) parameters.
 */
function compilePath(plugin: string, route: RouteDefinition): { pattern: RegExp; key: string; parameterised: boolean } {
  const culprit = `route ${route.method} ${route.path} of plugin "${plugin}"`;
  if (!route.path.startsWith('/')) throw new Error(`The path of ${culprit} must start with "/"`);
  if (route.path === '/') return { pattern: /^\/$/, key: `${route.method} /`, parameterised: false };
  const trailingSlash = route.path.length > 1 && route.path.endsWith('/');
  const segments = route.path.split('/').slice(1, trailingSlash ? -1 : undefined);
  const names = new Set<string>();
  let source = '';
  let key = '';
  for (const segment of segments) {
    if (segment.startsWith(':')) {
      const name = segment.slice(1);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || names.has(name)) {
        throw new Error(
          `Parameter "${segment}" in ${culprit} must be a unique identifier (optional and wildcard segments are not supported)`,
        );
      }
      names.add(name);
      source += `/(?<${name}>[^/]+)`;
      key += '/:';
    } else {
      if (segment === '' || segment.includes('*') || segment.includes('?'))
        throw new Error(`Segment "${segment}" in ${culprit} is not supported; use static or :param segments`);
      source += `/${escapeRegExp(segment)}`;
      key += `/${segment}`;
    }
  }
  return {
    pattern: new RegExp(`^${source}${trailingSlash ? '/?' : ''}$`),
    key: `${route.method} ${key}/`,
    parameterised: names.size > 0,
  };
}

/** The request paths a static route answers: its own and, for a path ending in a slash, the one without. */
function staticForms(path: string): string[] {
  return path.length > 1 && path.endsWith('/') ? [path, path.slice(0, -1)] : [path];
}

/** Percent-decode each raw parameter exactly once; a malformed escape is the client's error. */
export function decodeParams(raw: Record<string, string> | undefined): Record<string, string> {
  const params: Record<string, string> = {};
  if (!raw) return params;
  for (const name of Object.keys(raw)) {
    const value = raw[name]!;
    try {
      params[name] = decodeURIComponent(value);
    } catch {
      throw invalidParameter(name, `is not a valid percent-encoded path segment: ${JSON.stringify(value)}`);
    }
  }
  return params;
}

export class RouteTable {
  private readonly entries: RouteEntry[] = [];
  /** Static routes by exact request path, then by method. */
  private readonly staticPaths = new Map<string, Map<string, RouteEntry>>();
  /**
   * polka matches the paths with parameters; it is used as a router only (the server runs its own
   * lean request path), so each route's polka handler is just a key to its entry. Of the routes that
   * match, the first registered answers.
   */
  private readonly router = polka();
  private readonly entryOf = new Map<PolkaHandler, RouteEntry>();

  /** Register a route; `plugin` names its owner in logs. Throws on a duplicate method and path, naming both owners. */
  add(plugin: string, route: RouteDefinition): void {
    const { pattern, key, parameterised } = compilePath(plugin, route);
    const existing = this.entries.find((entry) => entry.key === key);
    if (existing) {
      throw new Error(
        `Route ${route.method} ${route.path} of plugin "${plugin}" is already registered as ${existing.route.method} ${existing.route.path} by plugin "${existing.plugin}"`,
      );
    }
    let validateBody: BodyValidator | undefined;
    try {
      validateBody = route.body ? compileBodySchema(route.body) : undefined;
    } catch (error) {
      throw new Error(
        `The body schema of route ${route.method} ${route.path} of plugin "${plugin}" is invalid: ${errorMessage(error)}`,
        { cause: error },
      );
    }
    const guards = guardsByPoint(plugin, route);
    let cacheControl = 'no-store';
    let publicMaxAgeMs = 0;
    if (route.tier !== 'public') cacheControl = 'private, no-store';
    // A public GET with guards of its own answers each visitor for themselves: nobody keeps its answer.
    else if (route.method === 'GET' && route.document !== 'operations' && !guards) {
      const maxAge = route.maxAge ?? DEFAULT_MAX_AGE;
      cacheControl = `public, max-age=${maxAge}`;
      publicMaxAgeMs = maxAge * 1000;
    }
    const entry: RouteEntry = {
      plugin,
      route,
      pattern,
      key,
      parameterised,
      validateBody,
      cacheControl,
      publicMaxAgeMs,
      guards,
      noFindings: new Findings(route),
    };
    this.entries.push(entry);
    if (parameterised) {
      const key: PolkaHandler = () => undefined;
      this.entryOf.set(key, entry);
      this.router.add(route.method, pattern, key);
      return;
    }
    for (const form of staticForms(route.path)) {
      // A route with parameters registered earlier that matches this path keeps answering it.
      if (this.router.find(route.method, form).handlers.length > 0) continue;
      const byMethod = this.staticPaths.get(form) ?? new Map<string, RouteEntry>();
      if (!byMethod.has(route.method)) byMethod.set(route.method, entry);
      this.staticPaths.set(form, byMethod);
    }
  }

  /** The route answering `method` on `path`; HEAD is answered by the GET route. */
  find(method: string, path: string): RouteEntry | undefined {
    const wanted = method === 'HEAD' ? 'GET' : method;
    const entry = this.staticPaths.get(path)?.get(wanted);
    if (entry) return entry;
    if (this.entryOf.size === 0) return undefined;
    // polka lists every matching route in registration order; the first one answers.
    const first = this.router.find(wanted, path).handlers[0];
    return first ? this.entryOf.get(first) : undefined;
  }

  /** The methods some route answers on `path` (HEAD with GET), in a fixed order; empty when none does. */
  allowed(path: string): string[] {
    const methods = new Set<string>();
    for (const { route, pattern } of this.entries) {
      if (pattern.test(path)) {
        methods.add(route.method);
        if (route.method === 'GET') methods.add('HEAD');
      }
    }
    return METHOD_ORDER.filter((method) => methods.has(method));
  }

  /** Every registered route with its owner, in registration order. */
  list(): readonly RegisteredRoute[] {
    return this.entries.map(({ plugin, route }) => ({ plugin, route }));
  }
}
