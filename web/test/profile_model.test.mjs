// The profiles section's pure logic (web/src/profile_model.js) on trees shaped as
// GET /api/v1/campaigns/NAME/profile-diff answers (docs/api.md).
// Run: node --test web/test/

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  profileChoices,
  changeMark,
  diffLabel,
  vanishedFrames,
  frameMatches,
} from '../src/profile_model.js';

test('choices: the targets and each cell once, keyed as the API takes them', () => {
  const record = {
    campaign: { baseline: 'a' },
    targets: ['a', 'b'],
    cells: [
      { pair: 'p1', scenario: 'hello', load_level: 'c4' },
      { pair: 'p2', scenario: 'hello', load_level: 'c4' },
      { scenario: 'json', load_level: 'r500' },
    ],
  };
  const c = profileChoices(record);
  assert.deepEqual(c.targets, ['a', 'b']);
  assert.equal(c.baseline, 'a');
  assert.deepEqual(
    c.cells.map((x) => x.key),
    ['hello/c4', 'json/r500'],
  );
  assert.deepEqual(profileChoices(undefined), { targets: [], cells: [], baseline: null });
});

test('marks: grown, shrunk and vanished frames are told apart by a sign', () => {
  assert.equal(changeMark({ delta: 50 }, 1000), '+');
  assert.equal(changeMark({ delta: -50 }, 1000), '−');
  assert.equal(changeMark({ delta: 4 }, 1000), ''); // under 0.5% of 1000 samples
  assert.equal(changeMark({ delta: 0.5 }, 10), ''); // under one sample
  assert.equal(changeMark({ delta: 0, vanished: true }, 1000), '−');
  assert.equal(diffLabel({ name: 'SpendCpu', delta: 300 }, 1000), '+ SpendCpu');
  assert.equal(diffLabel({ name: 'main', delta: 1 }, 1000), 'main');
});

test('vanished: the outermost frames only the base has, largest first', () => {
  const tree = {
    name: 'all',
    children: [
      {
        name: 'srv',
        delta: 0,
        children: [
          {
            name: 'small',
            vanished: true,
            base: 3,
            children: [{ name: 'x', vanished: true, base: 3 }],
          },
          { name: 'big', vanished: true, base: 40 },
          { name: 'kept', base: 10, children: [] },
        ],
      },
    ],
  };
  assert.deepEqual(vanishedFrames(tree), [
    { name: 'big', path: ['srv'], base: 40 },
    { name: 'small', path: ['srv'], base: 3 },
  ]);
  assert.deepEqual(vanishedFrames(null), []);
});

test('search: plain text anywhere in the name, any case', () => {
  assert.ok(frameMatches('SpendCpu', 'spendcpu'));
  assert.ok(frameMatches('std::operator()', 'operator()'));
  assert.ok(!frameMatches('main', 'SpendCpu'));
  assert.ok(!frameMatches('main', ''));
});
