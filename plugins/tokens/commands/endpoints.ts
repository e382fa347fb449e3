/** TOKEN ENDPOINTS: the endpoint names an administrator may grant, with their paths, and the wildcards. */
import { defineCommand, openApiPath } from '../../../lib/sdk.js';
import { wildcards } from '../endpoints.js';
import type { TokenCommandsOptions } from './options.js';

export function endpointsCommand({ endpoints }: TokenCommandsOptions) {
  return defineCommand({
    name: 'TOKEN ENDPOINTS',
    usage: '',
    help: 'Lists the endpoint names an administrator may grant, with their paths, and the wildcards.',
    adminOnly: true,
    args: [],
    handle({ reply }) {
      const grantable = endpoints();
      if (grantable.length === 0) reply('No token endpoint is served right now (is the api plugin enabled?).');
      // A path as the OpenAPI document writes it: `GET /api/irc/users/{nick}/`.
      for (const { name, method, path, summary } of grantable) {
        reply(`  ${name} — ${method} ${openApiPath(path)} — ${summary}`);
      }
      reply(`Wildcards: ${wildcards(grantable).join(', ')} (each also covers endpoints of its group added later).`);
    },
  });
}
