#!/usr/bin/env node
// Production entry point: runs the compiled commands from dist/.
import { execute } from '@oclif/core';

await execute({ dir: import.meta.url });
