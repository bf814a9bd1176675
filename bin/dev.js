#!/usr/bin/env node
// Development entry point: same as run.js but with oclif's development mode (stack traces, no manifest).
import { execute } from '@oclif/core';

await execute({ development: true, dir: import.meta.url });
