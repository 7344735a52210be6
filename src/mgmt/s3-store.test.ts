import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const STORE = fileURLToPath(new URL('./s3-store.ts', import.meta.url));

/** Opens a store (no request is sent) in a fresh process, where the SDK's once-per-process warning can show. */
function openInChild(env: NodeJS.ProcessEnv): string {
  const script = `
    const { openBackupStore } = await import(${JSON.stringify(STORE)});
    openBackupStore({ bucket: 'b', prefix: 'p' }, { region: 'us-east-1', endpoint: 'http://127.0.0.1:1', credentials: { accessKeyId: 'a', secretAccessKey: 's' } });
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    env,
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  return r.stderr;
}

describe("openBackupStore on the README's Node", () => {
  const base = { ...process.env };
  delete base['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'];

  it.skipIf(Number(process.versions.node.split('.')[0]) >= 22)(
    "prints no AWS SDK Node-version warning; an operator's own setting is kept",
    () => {
      expect(openInChild(base)).not.toContain('NodeVersionSupportWarning');
      // The operator asked for the SDK's warning: ferry does not override the SDK's own variable.
      expect(openInChild({ ...base, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'false' })).toContain(
        'NodeVersionSupportWarning',
      );
    },
  );
});
