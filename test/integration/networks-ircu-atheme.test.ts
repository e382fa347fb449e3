/**
 * The network-facing checks (test/support/network-suite.ts) on ircu+atheme: ircu 2.10.12 (Undernet's IRC server,
 * P10), built from its source archive (testnet/build-source.sh, once per machine), with Atheme 7.2's protocol/asuka.
 * ircu offers no SASL here (Atheme 7.2 does not announce it to ircu): the bot logs in with IDENTIFY. Without the
 * archive, skipped.
 */
import t from 'tap';
import { networkSuite } from '../support/network-suite.js';
import { missingSources } from '../support/testnet.js';

const missing = missingSources('ircu+atheme');
if (missing) t.plan(0, missing);
else networkSuite(t, 'ircu+atheme');
