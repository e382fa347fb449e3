/**
 * The plugin's Standard Webhooks signature against the specification's published test vector (the one every
 * Standard Webhooks library checks itself against), and the secrets it accepts.
 */
import t from 'tap';
import { messageId, parseSecret, sign } from '../../../plugins/events/webhooks-signature.js';

t.test('the published test vector', async (t) => {
  const key = parseSecret('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
  if (typeof key === 'string') throw new Error(key);
  t.equal(
    sign(key, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}'),
    'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  );
});

t.test('secrets: whsec_ and the base64 of 24 to 64 bytes', async (t) => {
  const of = (bytes: number) => `whsec_${Buffer.alloc(bytes, 7).toString('base64')}`;
  t.equal((parseSecret(of(24)) as Buffer).length, 24);
  t.equal((parseSecret(of(64)) as Buffer).length, 64);
  t.match(parseSecret(of(23)), /must hold 24 to 64 bytes .*got 23/);
  t.match(parseSecret(of(65)), /must hold 24 to 64 bytes .*got 65/);
  t.match(parseSecret(Buffer.alloc(32).toString('base64')), /must be a Standard Webhooks secret/);
  t.match(parseSecret('whsec_abc$def'), /must be "whsec_" and base64/);
  t.match(parseSecret('whsec_abcde'), /must be "whsec_" and base64/, 'a length base64 never has');
});

t.test('message ids: unique, without the "." the signed content is separated by', async (t) => {
  const ids = new Set(Array.from({ length: 1000 }, () => messageId()));
  t.equal(ids.size, 1000);
  t.ok([...ids].every((id) => /^msg_[A-Za-z0-9_-]{22}$/.test(id)));
});
