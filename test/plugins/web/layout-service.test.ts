/** `web.layout`: another plugin's page in the site's frame and look, its times in the site's zone. */
import t from 'tap';
import { webLayout } from '../../../plugins/web/services.js';

t.test("a page of another plugin: the site's frame, its menu and footer, with the rules it adds", async (t) => {
  let network = 'TestNet';
  const layout = webLayout({ network: () => network, timeZone: 'Europe/Berlin', menu: [] });
  const html = layout.page({ title: 'Your account', body: '<p>Hello &amp; welcome</p>', style: 'form.x{gap:1rem}' });
  t.match(html, /^<!doctype html><html lang="en">/);
  t.match(html, /<title>Your account · TestNet<\/title>/);
  t.match(html, /<a class="name" href="\/network\/">TestNet<\/a>/, 'the network heads it');
  t.match(html, /<nav aria-label="Site"><ul><li><a href="\/network\/">Network<\/a>/, 'with the public menu');
  t.match(html, /form\.x\{gap:1rem\}<\/style>/, 'the added rules close the style sheet');
  t.match(html, /<main id="main"><h1>Your account<\/h1><p>Hello &amp; welcome<\/p><\/main>/);
  t.match(html, /Times are in Europe\/Berlin\./);
  network = 'Renamed';
  t.match(layout.page({ title: 'x', body: '' }), /href="\/network\/">Renamed<\/a>/, 'the name as it is now');
  t.equal(layout.when('2026-11-26T13:05:00.000Z'), '2026-11-26 14:05', 'times in the site’s zone');
  t.equal(layout.when(null), '–');
  t.equal(layout.count(12345), '12,345');
  t.match(layout.table('Tokens', ['Token', 'n:Uses'], [['#1', '3']]), /<th scope="col" class="n">Uses<\/th>/);
});

t.test("another plugin's menu entry follows the site's own, on every page, marked on its own", async (t) => {
  const site = { network: () => 'TestNet', timeZone: 'UTC', menu: [] };
  const layout = webLayout(site);
  layout.addMenuEntry({ path: '/network/account/', label: 'Account' });
  layout.addMenuEntry({ path: '/network/account/', label: 'Account' });
  t.same(site.menu, [{ path: '/network/account/', label: 'Account' }], 'once, however often it is added');
  t.match(
    layout.page({ title: 'x', body: '' }),
    /<li><a href="\/network\/api\/">API<\/a><\/li><li><a href="\/network\/account\/">Account<\/a><\/li><\/ul>/,
  );
  t.match(
    layout.page({ title: 'x', body: '', current: '/network/account/' }),
    /<a href="\/network\/account\/" aria-current="page">Account<\/a>/,
  );
});
