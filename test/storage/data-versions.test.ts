import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DataVersions } from '../../src/storage/data-versions.ts';

describe('DataVersions', () => {
  it('changes for a set of tables exactly when one of them is written', () => {
    const v = new DataVersions();
    const ab = v.of(['a', 'b']);
    assert.equal(v.of(['a', 'b']), ab, 'nothing written: the same version');
    v.bump(['c']);
    assert.equal(v.of(['a', 'b']), ab, 'another table written');
    v.bump(['b']);
    const afterB = v.of(['a', 'b']);
    assert.notEqual(afterB, ab);
    // An older table written again after a newer one still moves the set's version.
    v.bump(['c']);
    v.bump(['a']);
    assert.notEqual(v.of(['a', 'b']), afterB);
    assert.notEqual(v.of(['a']), v.of(['b']));
  });

  it('reads no tables as a version that never changes', () => {
    const v = new DataVersions();
    const none = v.of([]);
    v.bump(['a']);
    assert.equal(v.of([]), none);
  });
});
