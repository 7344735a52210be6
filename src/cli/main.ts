#!/usr/bin/env node
import { dropServernameWarning } from '../util/warnings.js';
import { processIo } from './io.js';
import { runCli } from './run-cli.js';

dropServernameWarning();

const code = await runCli(process.argv.slice(2), processIo());
process.exitCode = code;
