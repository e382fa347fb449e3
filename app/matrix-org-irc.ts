/**
 * The matrix-org-irc adapter (`irc-network-data/matrix-org-irc`), for a bot that hands its own connected
 * matrix-org-irc client to the host with {@link MatrixIrcTransport.attach}. Importing this entry loads
 * matrix-org-irc, which the package lists as an optional peer dependency: install it to use this entry.
 * @module irc-network-data/matrix-org-irc
 */
export { MatrixIrcTransport, type Keepalive } from '../lib/irc/matrix-org-irc.js';
