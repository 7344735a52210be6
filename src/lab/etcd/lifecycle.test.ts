import { statfsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { labDataStorage, labDataStorageFor, TMPFS_MAGIC } from './lifecycle.js';

describe('labDataStorage', () => {
  it('takes FERRY_LAB_DATA when it is set', () => {
    expect(labDataStorage({ FERRY_LAB_DATA: '/somewhere/labs' })).toEqual({
      root: '/somewhere/labs',
      kind: 'chosen',
      why: 'FERRY_LAB_DATA',
    });
    expect(labDataStorage({ FERRY_LAB_DATA: 'lab-dir' })).toMatchObject({ root: undefined, kind: 'lab-dir' });
  });

  it('keeps the data in the lab directory when there is no shared-memory mount', () => {
    const s = labDataStorage({}, '/nonexistent/ferry-shm');
    expect(s).toEqual({ root: undefined, kind: 'lab-dir', why: 'no /nonexistent/ferry-shm' });
  });

  it('keeps the data in the lab directory when the place is not a tmpfs', ({ skip }) => {
    if (statfsSync(process.cwd()).type === TMPFS_MAGIC) skip('the checkout itself is on a tmpfs');
    const s = labDataStorage({}, process.cwd());
    expect(s).toMatchObject({ root: undefined, kind: 'lab-dir', why: `${process.cwd()} is not a tmpfs` });
  });

  it('uses /dev/shm when it is a tmpfs with room', ({ skip }) => {
    let st: ReturnType<typeof statfsSync>;
    try {
      st = statfsSync('/dev/shm');
    } catch {
      return skip('no /dev/shm here');
    }
    if (st.type !== TMPFS_MAGIC || st.bavail * st.bsize < 2 * 1024 ** 3)
      skip('/dev/shm is small or not a tmpfs');
    expect(labDataStorage({})).toEqual({
      root: '/dev/shm/ferry-lab-etcd-data',
      kind: 'tmpfs',
      why: '/dev/shm is a tmpfs',
    });
  });
});

describe('labDataStorageFor', () => {
  it('keeps the data of a lab kept after it stops in the lab directory, whatever the machine offers', () => {
    expect(labDataStorageFor({ keep: true }, { FERRY_LAB_DATA: '/somewhere/labs' })).toMatchObject({
      root: undefined,
      kind: 'lab-dir',
    });
    expect(labDataStorageFor({ keep: false }, { FERRY_LAB_DATA: '/somewhere/labs' })).toMatchObject({
      root: '/somewhere/labs',
      kind: 'chosen',
    });
    expect(labDataStorageFor({}, {}, '/nonexistent/ferry-shm')).toEqual(
      labDataStorage({}, '/nonexistent/ferry-shm'),
    );
  });
});
