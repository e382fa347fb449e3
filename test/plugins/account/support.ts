/**
 * The account pages' tests: the built-in plugins on the plugin harness (fake IRC, HTTP without a socket), the
 * nickserv plugin asking a fake Anope RPC server, and a small browser over `inject` that keeps the cookie
 * and sends forms as a browser does (with its Origin and the page's CSRF token).
 */
import type { Test } from 'tap';
import { builtinPlugins } from '../../../app/builtin-plugins.js';
import type { InjectResponse } from '../../../lib/http/inject.js';
import { startHarness, type Harness } from '../../../testing/harness.js';
import { startFakeRpc, type FakeRpcServer, type RpcCall, type RpcReply } from '../nickserv/fixtures/fake-rpc.js';

export const PASSWORD = 'hunter2-but-longer';
export const ORIGIN = 'http://localhost';

/** Anope 2.1's checkCredentials: alice (and her grouped nick alicealt), bob and boss, with PASSWORD. */
function anopeLike(call: RpcCall): RpcReply {
  const [nick = '', password] = call.params as string[];
  const accounts: Record<string, string> = { alice: 'alice', alicealt: 'alice', bob: 'bob', boss: 'Boss' };
  const account = accounts[nick.toLowerCase()];
  if (account === undefined) return { error: { code: -32099, message: 'No such account' } };
  return password === PASSWORD
    ? { result: { account, confirmed: true, uniqueid: 1 } }
    : { error: { code: -32098, message: 'Invalid password' } };
}

export interface SiteOptions {
  account?: Record<string, unknown>;
  nickserv?: Record<string, unknown>;
  /** `'files'` for a test that reads the store's files or restarts on them; default in memory. */
  store?: 'memory' | 'files';
  /** The store folder of an earlier site (a restart). */
  storeDir?: string;
  /** The model's clock, in milliseconds; default the real time. */
  now?: () => number;
  /** Leave the account plugin out (to compare the public pages). */
  withoutAccount?: boolean;
  /** An RPC server of an earlier site (a restart keeps it). */
  rpc?: FakeRpcServer;
  /** More `http` settings (e.g. `trust_proxy`). */
  http?: Record<string, unknown>;
  /** More `plugins.tokens` settings. */
  tokens?: Record<string, unknown>;
}

export interface Site {
  bot: Harness;
  rpc: FakeRpcServer;
  /** A new browser, with no cookie. */
  browser(): Browser;
}

export async function startSite(t: Test, options: SiteOptions = {}): Promise<Site> {
  const rpc = options.rpc ?? (await startFakeRpc(anopeLike));
  if (!options.rpc) t.teardown(() => rpc.close());
  const bot = await startHarness(t, {
    plugins: {
      stats: {},
      api: {},
      tokens: { rate_limit: { enabled: false }, ...options.tokens },
      nickserv: { backend: 'anope-rpc', url: rpc.url, ...options.nickserv },
      web: { network_name: 'TestNet' },
      ...(options.withoutAccount ? {} : { account: options.account ?? {} }),
    },
    registry: builtinPlugins,
    admins: ['boss'],
    ...(options.store ? { store: options.store } : {}),
    ...(options.storeDir ? { storeDir: options.storeDir } : {}),
    ...(options.now ? { clock: () => new Date(options.now!()) } : {}),
    ...(options.http ? { config: { http: options.http } } : {}),
  });
  // Nobody answers the collector's sync on the fake connection: the API answers once the model says it synced.
  bot.host.model.markSynced(false);
  return { bot, rpc, browser: () => new Browser(bot) };
}

/** What the browser got: the answer, and the page's CSRF token when it has one. */
export interface Visit extends InjectResponse {
  csrf: string | null;
}

export class Browser {
  /** The value of the cookie the bot set, as the browser holds it. */
  cookie: string | null = null;
  /** Its name: `network_session` over plain HTTP, `__Host-network_session` over HTTPS. */
  cookieName = 'network_session';
  /** Every request over TLS (as a browser on an https:// site); else as each call says. */
  secure = false;
  /** The client address it sends from. */
  ip = '127.0.0.1';
  /** Every Set-Cookie value the browser was sent. */
  readonly setCookies: string[] = [];
  /** The CSRF token of the page seen last. */
  csrf: string | null = null;

  constructor(private readonly bot: Harness) {}

  private headers(extra: Record<string, string>): Record<string, string> {
    return { ...(this.cookie ? { Cookie: `${this.cookieName}=${this.cookie}` } : {}), ...extra };
  }

  private take(response: InjectResponse): Visit {
    const set = response.headers['set-cookie'];
    if (set) {
      this.setCookies.push(set);
      const [, name = '', value = ''] = /^((?:__Host-)?network_session)=([^;]*)/.exec(set) ?? [];
      this.cookie = /Max-Age=0/.test(set) ? null : value;
      this.cookieName = name;
    }
    const csrf = /name="csrf" value="([^"]+)"/.exec(response.text)?.[1] ?? null;
    if (csrf) this.csrf = csrf;
    return { ...response, csrf };
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<Visit> {
    return this.take(
      await this.bot.from({ secure: this.secure, ip: this.ip }).inject('GET', path, this.headers(headers)),
    );
  }

  /**
   * Send a form as a browser does: from the bot's origin, with the CSRF token of the page seen last unless
   * `fields.csrf` says otherwise (null: none at all).
   */
  async post(
    path: string,
    fields: Record<string, string | null> = {},
    headers: Record<string, string> = { Origin: ORIGIN },
    secure = this.secure,
  ): Promise<Visit> {
    const form = new URLSearchParams();
    const all = { csrf: this.csrf, ...fields };
    for (const [name, value] of Object.entries(all)) if (value !== null) form.set(name, value);
    return this.take(
      await this.bot
        .from({ secure, ip: this.ip })
        .inject(
          'POST',
          path,
          this.headers({ 'Content-Type': 'application/x-www-form-urlencoded', ...headers }),
          form.toString(),
        ),
    );
  }

  /** Open the sign-in page and sign in; the answer to the form. */
  async signIn(account: string, password = PASSWORD, extra: Record<string, string> = {}): Promise<Visit> {
    await this.get('/network/account/');
    return this.post('/network/account/sign-in/', { account, password, ...extra });
  }
}

/** The text of an HTML page, tags removed, spaces collapsed: what a reader sees. */
export function textOf(html: string): string {
  return html
    .replace(/<style>.*?<\/style>/gs, '')
    .replace(/<script>.*?<\/script>/gs, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/\s+/g, ' ')
    .trim();
}
