#!/usr/bin/env node
// Writes oclif.manifest.json after every build: with it, oclif loads only the command it runs;
// without it, every command module (dockerode, pg, the charts...) is imported on every start,
// 1.1 s of CPU per process here, paid by each node, agent and task a run starts.
// The manifest is made from the built commands themselves, so it cannot describe stale ones as
// long as it is written by the same `npm run build` that compiled them.
import { Plugin } from '@oclif/core';
import { rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const path = join(root, 'oclif.manifest.json');
// The old one must not be read back as the truth about the new build.
await rm(path, { force: true });
const plugin = new Plugin({ root, type: 'core', ignoreManifest: true, errorOnManifestCreate: true });
await plugin.load();
await writeFile(path, `${JSON.stringify(plugin.manifest, null, 2)}\n`);
console.log(`oclif.manifest.json: ${Object.keys(plugin.manifest.commands).length} commands`);
