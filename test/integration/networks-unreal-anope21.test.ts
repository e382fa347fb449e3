/**
 * The network-facing checks (test/support/network-suite.ts) on unreal+anope21: UnrealIRCd 6 with Anope 2.1, both
 * built from their source archives (testnet/build-source.sh, once per machine). Without the archives, skipped.
 */
import t from 'tap';
import { networkSuite } from '../support/network-suite.js';
import { missingSources } from '../support/testnet.js';

const missing = missingSources('unreal+anope21');
if (missing) t.plan(0, missing);
else networkSuite(t, 'unreal+anope21');
