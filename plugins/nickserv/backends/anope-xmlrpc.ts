/**
 * The `anope-xmlrpc` backend: Anope 2.0's XML-RPC interface (modules m_httpd, m_xmlrpc and
 * m_xmlrpc_main), whose `checkAuthentication [nick, password]` answers a struct with `result: Success`
 * and `account` for a right password, and `error: Invalid password` for a wrong one or an unknown account.
 *
 * Anope 2.0 reads the request with a scanner of its own, not an XML parser: a string ends at the first
 * `<`, the spaces right after a tag are dropped, and its unescaping knows `&amp;`, `&lt;`, `&quot;`, its
 * own `&qt;` and numeric references, but not `&gt;` or `&apos;` (measured on Anope 2.0.12; see
 * test/fixtures/networks/anope-2.0/xmlrpc-escapes.txt). So every character that needs it, and every
 * space, is sent as a numeric reference, which Anope turns back into the character.
 */
import { ServiceUnavailableError, type CheckOutcome, type CheckRequest, type CredentialBackend } from './backend.js';
import { describeUrl, postForText } from './rpc-post.js';

export interface AnopeXmlRpcBackendOptions {
  url: URL;
  timeoutMs: number;
}

const METHOD = 'checkAuthentication';

/** `&`, `<`, `>`, quotes and spaces as numeric references: the one escaping Anope 2.0 undoes for all of them. */
export function escapeForAnope(text: string): string {
  return text.replace(/[&<>"' ]/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** The request body: one line, no spaces between tags (Anope's scanner reads those as text too). */
export function checkAuthenticationCall(nick: string, password: string): string {
  const param = (value: string): string => `<param><value><string>${escapeForAnope(value)}</string></value></param>`;
  return (
    `<?xml version="1.0"?><methodCall><methodName>${METHOD}</methodName>` +
    `<params>${param(nick)}${param(password)}</params></methodCall>`
  );
}

const ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  quot: '"',
  lt: '<',
  gt: '>',
  // Anope 2.0 writes `>` as `&qt;` (sic).
  qt: '>',
  apos: "'",
};

function unescapeXml(text: string): string {
  return text.replace(/&(#x[\da-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name.startsWith('#x') || name.startsWith('#X')) return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(Number(name.slice(1)));
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

/** The members of the struct Anope answers with (`<member><name>n</name><value><string>v</string></value>`). */
export function readStruct(xml: string): Map<string, string> {
  const members = new Map<string, string>();
  const member =
    /<member>\s*<name>([^<]*)<\/name>\s*<value>\s*(?:<string>([^<]*)<\/string>|([^<]*))\s*<\/value>\s*<\/member>/g;
  for (const match of xml.matchAll(member)) {
    members.set(unescapeXml(match[1]!.trim()), unescapeXml(match[2] ?? match[3]!.trim()));
  }
  return members;
}

export function anopeXmlRpcBackend(options: AnopeXmlRpcBackendOptions): CredentialBackend {
  const where = describeUrl(options.url);
  return {
    name: 'anope-xmlrpc',
    throughIrc: false,
    target: where,
    async check(request: CheckRequest): Promise<CheckOutcome> {
      const body = Buffer.from(checkAuthenticationCall(request.nick, request.password), 'utf8');
      const text = await postForText(METHOD, body, 'text/xml', {
        url: options.url,
        timeoutMs: options.timeoutMs,
        signal: request.signal,
      });
      const answer = readStruct(text);
      if (answer.get('result') === 'Success') {
        return { valid: true, account: answer.get('account') || request.nick };
      }
      const error = answer.get('error');
      // Anope 2.0 says the same for a wrong password and an unknown account.
      if (error === 'Invalid password') return { valid: false, reason: null };
      if (error !== undefined) {
        throw new ServiceUnavailableError(`Anope answered ${METHOD} with the error "${error}"`);
      }
      throw new ServiceUnavailableError(
        `${where} answered ${METHOD} without a result or an error (is m_xmlrpc_main loaded?)`,
      );
    },
  };
}
