/** The network-facing checks (test/support/network-suite.ts) on inspircd+anope. */
import t from 'tap';
import { networkSuite } from '../support/network-suite.js';

networkSuite(t, 'inspircd+anope');
