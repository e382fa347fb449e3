/**
 * A narrow declaration of the parts of polka 1.0.0-next.28 this project calls.
 * polka does ship types, but they make `handler`'s third argument (`next`)
 * required, while at runtime it must be left out for polka to run its own
 * handler chain; this declaration (which takes precedence) says what we use.
 */
declare module 'polka' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  /** The request as polka hands it on, with its parse of the URL. */
  export interface Request extends IncomingMessage {
    /** The pathname, still percent-encoded. */
    path: string;
    /** The query string with its leading `?`, or `''`. */
    search: string;
  }

  export type Handler = (request: Request, response: ServerResponse) => void | Promise<void>;

  export interface Options {
    /** Answers requests no route matched. */
    onNoMatch?: Handler;
    /** Answers a handler's rejection (the value it was rejected with). */
    onError?: (error: unknown, request: Request, response: ServerResponse) => void;
  }

  export interface Polka {
    /** Route a method and pattern; a RegExp's named groups become `request.params`. */
    add(method: string, pattern: RegExp | string, ...handlers: Handler[]): this;
    /**
     * The routes matching a method and path, in registration order (a HEAD request also
     * matches GET routes); `params` holds the named groups of the matches, still encoded.
     */
    find(method: string, path: string): { params: Record<string, string>; handlers: Handler[] };
    /** Serve one request from a `node:http` server's request event. */
    handler(request: IncomingMessage, response: ServerResponse): void;
  }

  export default function polka(options?: Options): Polka;
}
