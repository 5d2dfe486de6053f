// Bundles the extension and vscode-languageclient into one file, dist/extension.js (VS Code's
// guide: a bundled extension loads faster and its .vsix is small). `vscode` is the host's.
// Also copies the README's screenshot from docs/ into images/ for the package.
import * as esbuild from 'esbuild';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';

const production = process.argv.includes('--production');
await esbuild.build({
  entryPoints: ['src/extension.ts'],
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  external: ['vscode'],
  outfile: 'dist/extension.js',
  minify: production,
  sourcemap: !production,
  sourcesContent: false,
  logLevel: 'warning',
});
const shot = '../../docs/vscode-ghost-text.png';
if (existsSync(shot)) {
  mkdirSync('images', { recursive: true });
  copyFileSync(shot, 'images/vscode-ghost-text.png');
}
