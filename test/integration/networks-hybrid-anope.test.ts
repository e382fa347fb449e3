/** The network-facing checks (test/support/network-suite.ts) on hybrid+anope. */
import t from 'tap';
import { networkSuite } from '../support/network-suite.js';

networkSuite(t, 'hybrid+anope');
