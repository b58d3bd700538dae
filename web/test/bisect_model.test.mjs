// The bisection page's pure logic (web/src/bisect_model.js) on documents shaped as
// GET /api/v1/bisections/ID answers (docs/api.md).
// Run: node --test web/test/

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  bisectRange,
  pointsByDecision,
  rangeWords,
  decisionStyle,
  estimateText,
  stepCampaigns,
  shortOid,
  bisectionHash,
} from '../src/bisect_model.js';

const step = (n, position, decision, extra = {}) => ({
  step: n,
  position,
  oid: String(n).repeat(40),
  subject: `commit ${n}`,
  decision,
  ...extra,
});

// 16 commits, the culprit at 8: good at 7, a failed build at 11, bad at 9, bad at 8.
const found = {
  id: 4,
  figure: 'cpu_us_per_request',
  commits: 16,
  state: 'found',
  steps: [step(1, 7, 'good'), step(2, 11, 'build failed'), step(3, 9, 'bad'), step(4, 8, 'bad')],
};

const ends = (range) => range.band.map((b) => [b.step, b.low, b.high]);

test('the band starts at the whole range and shrinks with each good and bad step', () => {
  const range = bisectRange(found);
  assert.equal(range.commits, 16);
  assert.equal(range.last, 15);
  assert.deepEqual(ends(range), [
    [0, 0, 15],
    [1, 7, 15], // good at 7 raises the low end
    [2, 7, 15], // a failed build leaves it
    [3, 7, 9], // bad at 9 lowers the high end
    [4, 7, 8],
  ]);
});

test('a found search ends with low + 1 == high, the culprit at the high end', () => {
  const range = bisectRange(found);
  const end = range.band[range.band.length - 1];
  assert.equal(end.low + 1, end.high);
  assert.equal(end.high, found.steps[3].position);
  assert.equal(range.narrowed, true);
  assert.equal(bisectRange({ ...found, steps: found.steps.slice(0, 3) }).narrowed, false);
});

test('build failed and undecided steps do not move the band but are drawn', () => {
  const range = bisectRange({
    commits: 10,
    steps: [step(1, 4, 'build failed'), step(2, 5, 'undecided'), step(3, 6, 'bad')],
  });
  assert.deepEqual(ends(range), [
    [0, 0, 9],
    [1, 0, 9],
    [2, 0, 9],
    [3, 0, 6],
  ]);
  assert.deepEqual(
    range.points.map((p) => [p.step, p.position, p.decision]),
    [
      [1, 4, 'build failed'],
      [2, 5, 'undecided'],
      [3, 6, 'bad'],
    ],
  );
});

test('steps without a position are skipped: no point, the band left, counted', () => {
  const range = bisectRange({
    commits: 10,
    steps: [
      step(1, null, 'good'),
      step(2, -1, 'bad'),
      step(3, 12, 'bad'), // beyond the range
      step(4, 3, 'good'),
    ],
  });
  assert.equal(range.unplaced, 3);
  assert.deepEqual(
    range.points.map((p) => p.step),
    [4],
  );
  assert.deepEqual(ends(range), [
    [0, 0, 9],
    [1, 0, 9],
    [2, 0, 9],
    [3, 0, 9],
    [4, 3, 9],
  ]);
});

test('a decision outside what is left never widens the range again', () => {
  const range = bisectRange({
    commits: 10,
    steps: [step(1, 6, 'good'), step(2, 2, 'good'), step(3, 8, 'bad'), step(4, 9, 'bad')],
  });
  assert.deepEqual(ends(range).slice(-1), [[4, 6, 8]]);
});

test('a search without steps is the whole range, and said so', () => {
  const doc = { commits: 64, figure: 'rps', steps: [] };
  const range = bisectRange(doc);
  assert.deepEqual(ends(range), [[0, 0, 63]]);
  assert.equal(range.points.length, 0);
  assert.equal(range.narrowed, false);
  assert.equal(
    rangeWords(doc, range),
    'The range of 64 commits (positions 0 to 63) bisected for rps: no commit decided yet.',
  );
  assert.equal(
    rangeWords(found, bisectRange(found)),
    'The range of 16 commits (positions 0 to 15) bisected for cpu_us_per_request: after 4 steps the last good commit is at 7 and the first bad at 8.',
  );
});

test('points are grouped by decision in a fixed order, each with its own shape', () => {
  const groups = pointsByDecision(bisectRange(found));
  assert.deepEqual(
    groups.map((g) => [g.decision, g.points.map((p) => p.position)]),
    [
      ['good', [7]],
      ['bad', [9, 8]],
      ['build failed', [11]],
    ],
  );
  const shapes = new Set(
    ['good', 'bad', 'build failed', 'undecided'].map((d) => decisionStyle(d).pointStyle),
  );
  assert.equal(shapes.size, 4);
  assert.equal(decisionStyle('something new').label, 'undecided');
});

test("a step's estimate, its campaigns, the short oid and the page's address", () => {
  assert.equal(estimateText({ estimate: 1.03, low: 1.01, high: 1.05 }), '1.0300 [1.0100, 1.0500]');
  assert.equal(estimateText({ estimate: 1.03, low: null, high: null }), '1.0300');
  assert.equal(estimateText({ estimate: null }), '–');
  assert.deepEqual(stepCampaigns({ campaigns: [7, 9], campaign_names: ['nightly-3', null] }), [
    { id: 7, name: 'nightly-3' },
    { id: 9, name: null },
  ]);
  assert.deepEqual(stepCampaigns({ campaigns: [5] }), [{ id: 5, name: null }]);
  assert.equal(shortOid('3f2a91c04b7e' + '0'.repeat(28)), '3f2a91c04b7e');
  assert.equal(bisectionHash(12), '#/bisections/12');
});
