/**
 * The network-facing checks (test/support/network-suite.ts) on solanum+atheme: Solanum (Libera.Chat's IRC server),
 * built from its source archive (testnet/build-source.sh, once per machine), with Atheme 7.2's protocol/charybdis.
 * Without the archive, skipped.
 */
import t from 'tap';
import { networkSuite } from '../support/network-suite.js';
import { missingSources } from '../support/testnet.js';

const missing = missingSources('solanum+atheme');
if (missing) t.plan(0, missing);
else networkSuite(t, 'solanum+atheme');
