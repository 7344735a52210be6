#!/usr/bin/env node
import { processIo } from './io.js';
import { runCli } from './run-cli.js';
import { dropServernameWarning } from './warnings.js';

dropServernameWarning();

const code = await runCli(process.argv.slice(2), processIo());
process.exitCode = code;
