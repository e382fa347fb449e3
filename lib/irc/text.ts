/**
 * Lines the bot writes: a command with its parameters as one protocol line, and text cut into
 * pieces that fit one PRIVMSG or NOTICE. Shared by the transports and by command answers, which
 * split their text themselves to know when the last piece has left.
 */

/** Longest text put in one PRIVMSG/NOTICE, in bytes, leaving room for the prefix. */
const MAX_TEXT_BYTES = 400;

/** `command p1 p2 :last param` with the last parameter protected when it needs to be. */
export function formatLine(command: string, params: readonly string[]): string {
  const parts = [command];
  params.forEach((param, index) => {
    const clean = param.replace(/[\r\n\0]/g, ' ');
    const last = index === params.length - 1;
    if (last && (clean === '' || clean.includes(' ') || clean.startsWith(':'))) parts.push(':' + clean);
    else parts.push(clean);
  });
  return parts.join(' ');
}

/** Split text into pieces of at most `maxBytes` UTF-8 bytes, at spaces where possible. */
export function splitText(text: string, maxBytes = MAX_TEXT_BYTES): string[] {
  const pieces: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    let rest = line;
    while (Buffer.byteLength(rest) > maxBytes) {
      let cut = 0;
      let bytes = 0;
      for (const character of rest) {
        const size = Buffer.byteLength(character);
        if (bytes + size > maxBytes) break;
        bytes += size;
        cut += character.length;
      }
      const space = rest.lastIndexOf(' ', cut);
      if (space > cut / 2) cut = space;
      pieces.push(rest.slice(0, cut));
      rest = rest.slice(cut).replace(/^ /, '');
    }
    if (rest.length > 0) pieces.push(rest);
  }
  return pieces;
}

/** Text without IRC formatting: bold, colours (`\x0304,01`), hex colours, italics, underline, reverse, reset. */
export function stripFormatting(text: string): string {
  return text.replace(
    /\x03(?:\d{1,2}(?:,\d{1,2})?)?|\x04(?:[\da-f]{6}(?:,[\da-f]{6})?)?|[\x02\x0f\x11\x16\x1d\x1e\x1f]/gi,
    '',
  );
}
