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
  profileWindows,
  profileState,
  profileHash,
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

// A run of record's windows as docs/report.md lists them: two targets, one cell, two rounds, a
// replaced invalid attempt, one valid window whose profile could not be taken and a noise window.
const record = {
  campaign: { baseline: 'a' },
  targets: ['a', 'b'],
  cells: [
    { scenario: 'hello', load_level: 'c4' },
    { scenario: 'hello', load_level: 'c8' },
  ],
  windows: [
    {
      target: 'b',
      scenario: 'hello',
      load_level: 'c4',
      round: 2,
      position: 1,
      attempts: [
        { id: 7, attempt: 1, verdict: 'invalid' },
        { id: 9, attempt: 2, verdict: 'valid' },
      ],
    },
    {
      target: 'b',
      scenario: 'hello',
      load_level: 'c4',
      round: 1,
      position: 0,
      attempts: [{ id: 2, attempt: 1, verdict: 'valid' }],
    },
    {
      target: 'b',
      scenario: 'hello',
      load_level: 'c4',
      round: 3,
      position: 0,
      attempts: [{ id: 11, attempt: 1, verdict: 'valid' }],
    },
    {
      target: 'b',
      scenario: 'hello',
      load_level: 'c4',
      round: 0,
      position: 2,
      noise: true,
      attempts: [{ id: 1, attempt: 1, verdict: 'valid' }],
    },
    {
      target: 'a',
      scenario: 'hello',
      load_level: 'c4',
      round: 1,
      position: 1,
      attempts: [{ id: 3, attempt: 1, verdict: 'valid' }],
    },
    {
      target: 'b',
      scenario: 'hello',
      load_level: 'c8',
      round: 1,
      position: 0,
      attempts: [{ id: 5, attempt: 1, verdict: 'valid' }],
    },
  ],
  profiles: { diffs: [], unprofiled: [{ window_id: 11, error: 'perf could not start' }] },
};

test('windows: the valid profiled attempts of one target in one cell, by round', () => {
  const windows = profileWindows(record, 'b', 'hello/c4');
  assert.deepEqual(
    windows.map((w) => w.id),
    [2, 9, 1],
    'rounds in order, the noise window last; the invalid and the unprofiled attempt left out',
  );
  assert.deepEqual(
    windows.map((w) => w.label),
    ['#2 · round 1', '#9 · round 2 · attempt 2', '#1 · noise 2'],
  );
  assert.deepEqual(
    profileWindows(record, 'a', 'hello/c4').map((w) => w.id),
    [3],
  );
  assert.deepEqual(profileWindows(record, 'b', 'hello/c16'), []);
  assert.deepEqual(profileWindows(undefined, 'b', 'hello/c4'), []);
});

test('state: the hash query presets what the campaign has, and nothing else', () => {
  assert.deepEqual(profileState(record), {
    target: 'b',
    cell: 'hello/c4',
    compare: '',
    window: '',
  });
  assert.deepEqual(profileState(record, { target: 'b', compare: 'a', cell: 'hello/c8' }), {
    target: 'b',
    cell: 'hello/c8',
    compare: 'a',
    window: '',
  });
  // Unknown names fall back; a target is not compared with itself.
  assert.deepEqual(profileState(record, { target: 'zz', compare: 'b', cell: 'x/y' }), {
    target: 'b',
    cell: 'hello/c4',
    compare: '',
    window: '',
  });
  assert.equal(profileState(record, { window: '9' }).window, '9');
  assert.equal(profileState(record, { window: '11' }).window, '', 'no profile: not a choice');
  assert.equal(profileState(record, { window: '5' }).window, '', 'another cell');
  assert.equal(profileState(record, { window: '9', compare: 'a' }).window, '', 'compared');
});

test('hash: the campaign page with its Profiles section preset', () => {
  assert.equal(
    profileHash('steps-10-remeasure-1', {
      target: 'hello',
      compare: 'hello-old',
      cell: 'hello/c2',
    }),
    '#/campaigns/steps-10-remeasure-1?target=hello&compare=hello-old&cell=hello%2Fc2',
  );
  assert.equal(profileHash('a b', {}), '#/campaigns/a%20b');
  const [, query] = profileHash('x', { target: 't', window: 4 }).split('?');
  assert.deepEqual(Object.fromEntries(new URLSearchParams(query)), { target: 't', window: '4' });
});
