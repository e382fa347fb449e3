/** The network-facing checks (test/support/network-suite.ts) on ngircd+atheme. */
import t from 'tap';
import { networkSuite } from '../support/network-suite.js';

networkSuite(t, 'ngircd+atheme');
