// Lint rules: typescript-eslint's recommended type-aware set, with formatting left to prettier.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'reports/**', '.tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // The report, the run and the chaos read as named steps: a function past 80 lines is split.
    files: ['src/report/**/*.ts', 'src/run/**/*.ts', 'src/chaos/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 79 }],
    },
  },
  prettier,
);
