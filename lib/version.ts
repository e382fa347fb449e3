/** The package's name and version, read once from package.json. */
import { readFileSync } from 'node:fs';

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  name: string;
  version: string;
};

export const packageName = packageJson.name;
export const packageVersion = packageJson.version;
export const versionString = `${packageJson.name} ${packageJson.version}`;
