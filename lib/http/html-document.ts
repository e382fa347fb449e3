/**
 * An HTML answer: a page a plugin renders (the website, an account form). The server sends it as
 * `text/html; charset=utf-8` with the same cache headers, ETag, 304 and HEAD as a JSON answer of its
 * route; its bytes and ETag are computed once, so a page rendered once can be answered many times.
 * Routes that answer pages are left out of the OpenAPI document (see `RouteDefinition.document`).
 */
import { etagOf } from './etag.js';

export const HTML_TYPE = 'text/html; charset=utf-8';

export class HtmlDocument {
  readonly bytes: Buffer;
  readonly etag: string;

  constructor(html: string) {
    this.bytes = Buffer.from(html, 'utf8');
    this.etag = etagOf(this.bytes);
  }
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** `text` safe in HTML text and in a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character]!);
}
