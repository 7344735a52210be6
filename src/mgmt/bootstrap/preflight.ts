/**
 * Before anything is created: every tool a command needs is present and in its supported range,
 * and clusterctl is of the core provider's minor (its contract decides what it installs, mgmt.md §2).
 */
import { FerryError } from '../../errors.js';
import type { Tools } from '../tools/adapter.js';
import { show, type ToolName } from '../tools/versions.js';

export async function preflightTools(
  tools: Tools,
  o: { need: ToolName[]; core: string; coreSource: string; progress: (line: string) => void },
): Promise<void> {
  const runtime = await tools.runtime();
  const found = [`${runtime} ${show(await tools.version(runtime))}`];
  for (const t of o.need) found.push(`${t} ${show(await tools.version(t))}`);
  const cc = await tools.version('clusterctl');
  o.progress(`tools: ${[...found, `clusterctl ${show(cc)}`].join(', ')}`);
  const core = o.core.replace(/^v/, '').split('.').map(Number);
  if (cc.major !== core[0] || cc.minor !== core[1])
    throw new FerryError(
      'input',
      `clusterctl ${cc.major}.${cc.minor}.${cc.patch} does not match ${o.coreSource} ${o.core}`,
      {
        remediation: `install clusterctl ${o.core} (the same minor as the core provider)`,
      },
    );
}
