/**
 * `ferry mgmt bootstrap` as a child process for the tests, until the `ferry mgmt` dispatcher (owned
 * by another branch) routes to it: the same runMgmtBootstrap, the same error rendering as runCli.
 */

import { processIo } from '../../src/cli/io.js';
import { runMgmtBootstrap } from '../../src/cli/mgmt-bootstrap.js';
import { describeError, FerryError } from '../../src/errors.js';

const io = processIo();
try {
  process.exitCode = await runMgmtBootstrap(process.argv.slice(2), io);
} catch (err) {
  io.stderr(`${describeError(err)}\n`);
  process.exitCode = err instanceof FerryError ? err.exitCode : 4;
}
