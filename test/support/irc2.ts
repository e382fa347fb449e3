/**
 * The transcripts of IRCnet's ircd 2.11 (test/fixtures/networks/irc2/, INDEX.md there): several clients on two
 * linked servers, each line `[client] >> sent` or `[client] << received`. These read what one client received.
 */
import { readFileSync } from 'node:fs';

/** The folder, from dist/test/support/ where the tests run. */
const folder = new URL('../../../test/fixtures/networks/irc2/', import.meta.url);

/** The lines of one transcript, as recorded. */
function transcript(file: string): string[] {
  return readFileSync(new URL(file, folder), 'utf8').split('\n');
}

/** Every raw line `client` received in `file`, in order. */
export function irc2Received(file: string, client: string): string[] {
  const prefix = `[${client}] << `;
  return transcript(file)
    .filter((line) => line.startsWith(prefix))
    .map((line) => line.slice(prefix.length));
}

/**
 * The raw lines `client` received after it sent `sent` (the `occurrence`-th time, from 1), up to the next line it
 * sent; throws where it never sent that.
 */
export function irc2Answer(file: string, client: string, sent: string, occurrence = 1): string[] {
  const lines = transcript(file);
  const asked = `[${client}] >> ${sent}`;
  let start = -1;
  for (let seen = 0; seen < occurrence; seen++) {
    start = lines.indexOf(asked, start + 1);
    if (start < 0) throw new Error(`${client} never sent "${sent}" ${occurrence} times in ${file}`);
  }
  const answer: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith(`[${client}] >> `)) break;
    if (line.startsWith(`[${client}] << `)) answer.push(line.slice(`[${client}] << `.length));
  }
  return answer;
}
