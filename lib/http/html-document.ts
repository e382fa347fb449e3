/**
 * An HTML answer: a page a plugin renders (the website, an account form). The server sends it as
 * `text/html; charset=utf-8` with the same cache headers, ETag, 304 and HEAD as a JSON answer of its
 * route; its bytes and ETag are computed once, so a page rendered once can be answered many times.
 * Routes that answer pages are left out of the OpenAPI document (see `RouteDefinition.document`).
 */
import { createHash } from 'node:crypto';
import type { GzipCopy } from './compression.js';
import { etagOf } from './etag.js';

export const HTML_TYPE = 'text/html; charset=utf-8';

/** A text answer of any type (e.g. the Prometheus exposition format), sent as it is. */
export class TextDocument {
  readonly bytes: Buffer;
  readonly etag: string;
  /**
   * Its gzip'd copy, made once it is answered again (compression.ts).
   * @internal
   */
  gzipCopy?: GzipCopy;

  constructor(
    text: string,
    readonly contentType: string,
  ) {
    this.bytes = Buffer.from(text, 'utf8');
    this.etag = etagOf(this.bytes);
  }
}

export class HtmlDocument extends TextDocument {
  constructor(html: string) {
    super(html, HTML_TYPE);
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

/**
 * The Content-Security-Policy source that allows one inline script, by its hash (`'sha256-…'`): a page that
 * carries `<script>${script}</script>` lists it under `script-src`.
 */
export function inlineScriptSource(script: string): string {
  return `'sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}'`;
}
