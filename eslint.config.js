// @ts-check
import { readdirSync } from 'node:fs';
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The built-in plugins: each folder under plugins/. */
const plugins = readdirSync(new URL('./plugins/', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

/** A built-in plugin imports the core only through its SDK entry. */
const sdkOnly = {
  group: ['**/lib/**', '!**/lib/sdk.js'],
  message: 'A plugin imports the core only from lib/sdk.js, its one entry for plugin authors.',
};

/** A dynamic `import()` would pass the rules above unseen: plugins and outside plugins import statically. */
const staticImportsOnly = [
  'error',
  {
    selector: 'ImportExpression',
    message: 'A plugin imports statically (no import()), so that the import rules can check what it imports.',
  },
];

/** Plugin `name` may not import another plugin's files: plugins meet through declared services. */
function ownFolderOnly(name) {
  const others = plugins.filter((other) => other !== name);
  return {
    files: [`plugins/${name}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            sdkOnly,
            {
              group: ['**/plugins/**', ...others.map((other) => `**/${other}/**`)],
              message: `The plugin "${name}" may not import another plugin's files; use a service it provides (PluginDefinition.uses).`,
            },
            {
              group: ['**/app/**'],
              message: 'A plugin does not import the program (app/): the program imports the plugins.',
            },
          ],
        },
      ],
      'no-restricted-syntax': staticImportsOnly,
    },
  };
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'docs/api/**', 'testnet/**', 'coverage/**', '.tap/**'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-control-regex': 'off',
    },
  },
  ...plugins.map(ownFolderOnly),
  {
    // An outside plugin has one entry into this package, the public SDK (app/sdk.ts): the contracts of the
    // built-in plugins' services it may use come with it.
    files: ['examples/**/*.ts'],
    // A program that embeds the host, and a plugin's tests, use the package's other entries (below).
    ignores: ['examples/embedded-bot/**', 'examples/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'irc-network-data',
              message: "An outside plugin imports only the SDK: 'irc-network-data/sdk', not the package's entry.",
            },
          ],
          patterns: [
            {
              group: ['irc-network-data/*', '!irc-network-data/sdk'],
              message: "An outside plugin imports only the SDK: 'irc-network-data/sdk'.",
            },
            {
              group: ['**/lib/**'],
              message:
                "An outside plugin imports only the package's SDK (app/sdk.js here, 'irc-network-data/sdk' outside), not the core's files.",
            },
            {
              group: ['**/plugins/**'],
              message: 'An outside plugin uses the built-in plugins through their services.',
            },
            {
              group: ['**/app/**', '!**/app/sdk.js'],
              message:
                "An outside plugin imports only the SDK (app/sdk.js here), not the package's entry or the program: the contracts of the built-in plugins' services come with the SDK.",
            },
          ],
        },
      ],
      'no-restricted-syntax': staticImportsOnly,
    },
  },
  {
    // A program that embeds the host, and a plugin's tests, import the package's entries (app/index.js,
    // app/irc-framework.js, app/matrix-org-irc.js, testing/index.js here), never the files behind them.
    files: ['examples/embedded-bot/**/*.ts', 'examples/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/lib/**', '**/plugins/**', '**/testing/*', '!**/testing/index.js'],
              message:
                "An integrator imports the package's entries (app/*.js, testing/index.js here), not the files behind them.",
            },
          ],
        },
      ],
      'no-restricted-syntax': staticImportsOnly,
    },
  },
  {
    // A function fits on a screen or two: one that grows past this mixes concerns (scripts/function-lengths.mjs
    // lists them all by length).
    files: ['lib/**/*.ts', 'plugins/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 120, skipBlankLines: false, skipComments: false, IIFEs: true }],
    },
  },
  {
    files: ['scripts/**/*.mjs', 'eslint.config.js'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        URL: 'readonly',
      },
    },
  },
);
