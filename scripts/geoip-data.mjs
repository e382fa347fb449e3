#!/usr/bin/env node
/**
 * Part of the build: copies the one GeoIP country database the stats plugin reads by default (GeoLite2
 * country data, as the @ip-location-db/geolite2-country-mmdb package has it, with its licence and EULA) to
 * dist/geoip/, so that the package ships that file alone, not the package's two other databases.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const source = path.dirname(
  createRequire(import.meta.url).resolve('@ip-location-db/geolite2-country-mmdb/package.json'),
);
const target = path.join(root, 'dist', 'geoip');
mkdirSync(target, { recursive: true });
for (const file of ['geolite2-country.mmdb', 'GEOLITE2_LICENSE', 'GEOLITE2_EULA']) {
  copyFileSync(path.join(source, file), path.join(target, file));
}
