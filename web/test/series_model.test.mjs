// The series page's pure logic (web/src/series_model.js) on a small document shaped as
// GET /api/v1/series/NAME answers (docs/api.md).
// Run: node --test web/test/

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  seriesFigure,
  lineLabel,
  alignedPoints,
  changePosition,
  changeSize,
  fmtChange,
  statusStyle,
  changeMarker,
  changesOfLine,
  remeasuredText,
  seriesCells,
  cellLabelOf,
  modeSegments,
  cellDatasets,
  changesOfCell,
} from '../src/series_model.js';

const line = (target, points) => ({
  pair: '',
  scenario: 'json',
  load_level: 'c64',
  target,
  points,
});
const point = (id, estimate) => ({
  campaign_id: id,
  campaign: `n-${id}`,
  estimate,
  low: estimate * 0.99,
  high: estimate * 1.01,
  n: 3,
});
const change = (target, before, after, status, estimate = 0.9) => ({
  pair: '',
  scenario: 'json',
  load_level: 'c64',
  target,
  figure: 'rps',
  direction: 'regression',
  status,
  size: { estimate, low: estimate - 0.012, high: estimate + 0.011 },
  before,
  after,
});
const doc = {
  campaigns: [1, 2, 3, 4, 5].map((id) => ({ id, name: `n-${id}` })),
  lines: [line('app', [point(1, 100), point(2, 101), point(4, 90), point(5, 91)])],
  changes: [
    change('app', 'n-2', 'n-4', 'suspected'),
    change('other', 'n-1', 'n-2', 'confirmed'),
    change('app', 'n-1', 'n-2', 'false alarm', 1.05),
  ],
};

test('the figure selector knows rps, cpu and p99, and falls back to rps', () => {
  assert.equal(seriesFigure('cpu').figure, 'cpu_us_per_request');
  assert.equal(seriesFigure('p99').figure, 'p99_us');
  assert.equal(seriesFigure('speed').query, 'rps');
});

test('points are aligned on the campaigns, a campaign without one is a gap', () => {
  const aligned = alignedPoints(doc, doc.lines[0]);
  assert.deepEqual(
    aligned.map((p) => p?.estimate ?? null),
    [100, 101, null, 90, 91],
  );
  assert.equal(lineLabel(doc.lines[0]), 'json · 64 connections · app');
  assert.equal(
    lineLabel({ ...doc.lines[0], pair: 'srv-1' }),
    'on srv-1: json · 64 connections · app',
  );
});

test('a change sits half-way between its campaigns, and reads with its interval', () => {
  assert.equal(changePosition(doc, doc.changes[0]), 2); // between n-2 (1) and n-4 (3)
  assert.equal(changePosition(doc, change('app', 'n-9', 'n-4', 'suspected')), null);
  assert.equal(fmtChange(0.901), '−9.9%');
  assert.equal(fmtChange(1.05), '+5.0%');
  assert.equal(changeSize(doc.changes[0]), '−10.0% [−11.2%, −8.9%]');
  assert.equal(changeSize({ size: { estimate: 0.9, low: null, high: null } }), '−10.0%');
  const marker = changeMarker(doc, doc.changes[0]);
  assert.equal(marker.value, 2);
  assert.equal(marker.label, 'regression −10.0% [−11.2%, −8.9%] · suspected');
});

test('suspected, confirmed and false alarm are drawn apart; any other status too', () => {
  const styles = ['suspected', 'confirmed', 'false alarm'].map((s) =>
    JSON.stringify(statusStyle(s)),
  );
  assert.equal(new Set(styles).size, 3);
  assert.deepEqual(statusStyle('confirmed').dash, [], 'confirmed: a solid line');
  assert.ok(statusStyle('suspected').dash.length > 0, 'suspected: a dashed line');
  const unknown = statusStyle('re-measured twice');
  assert.ok(unknown.colour && unknown.dash, 'an unknown status still has a style');
  assert.match(
    changeMarker(doc, { ...doc.changes[0], status: 're-measured twice' }).label,
    /re-measured twice$/,
  );
});

test("a line's changes are its own, in campaign order", () => {
  const mine = changesOfLine(doc, doc.lines[0]);
  assert.deepEqual(
    mine.map((c) => c.status),
    ['false alarm', 'suspected'],
  );
});

test('a re-measurement reads as its interval new / old and rounds, or why it did not run', () => {
  const c = change('app', 1, 2, 'confirmed');
  assert.equal(remeasuredText(c), null);
  c.remeasured = {
    campaign: 'n-9-remeasure-1',
    rounds: 7,
    estimate: 1.201,
    low: 1.18,
    high: 1.223,
  };
  assert.equal(remeasuredText(c), '+20.1% [+18.0%, +22.3%] new / old, 7 rounds');
  c.remeasured = { campaign: 'n-9-remeasure-1', rounds: 1, estimate: null, low: null, high: null };
  assert.equal(remeasuredText(c), '1 round');
  c.remeasured = { campaign: null, rounds: 0, detail: 'the line runs on the pair of srv-1' };
  assert.equal(remeasuredText(c), 'the line runs on the pair of srv-1');
  assert.notDeepEqual(statusStyle('unconfirmed'), statusStyle('no such status'));
});

// Campaigns m-1 .. m-N of the given gate modes, and a line with a point in those of `withPoint`.
const modeDoc = (modes, lines) => ({
  campaigns: modes.map((m, i) => ({ id: i + 1, name: `m-${i + 1}`, gates_in_force: m })),
  lines,
  changes: [],
});
const pointsAt = (ids) => ids.map((id) => point(id, 1000 + id));

test('a line is cut wherever the gate mode changes, and only there', () => {
  const doc = modeDoc(
    ['enforce', 'enforce', 'warn', 'warn', 'enforce', null, 'enforce'],
    [line('app', pointsAt([1, 2, 3, 4, 5, 6, 7]))],
  );
  const segments = modeSegments(doc, doc.lines[0]);
  assert.deepEqual(
    segments.map((s) => [s.mode, s.from, s.to, s.judged]),
    [
      ['enforce', 0, 1, true],
      ['warn', 2, 3, false],
      ['enforce', 4, 4, true],
      ['unknown', 5, 5, false],
      ['enforce', 6, 6, true],
    ],
  );
  // Every point is in exactly one segment, that of its campaign's mode.
  const modeOf = (i) => doc.campaigns[i].gates_in_force ?? 'unknown';
  doc.campaigns.forEach((c, i) => {
    const holding = segments.filter((s) => s.points[i]);
    assert.equal(holding.length, 1, c.name);
    assert.equal(holding[0].mode, modeOf(i), c.name);
    assert.equal(holding[0].points[i].campaign_id, c.id);
  });
});

test('a campaign without a point spans within its mode, and cuts across another', () => {
  // m-2 (enforce) has no point: m-1 and m-3 stay one line. m-5 (warn) has no point: m-4 and m-6
  // (enforce) are still not joined across it.
  const doc = modeDoc(
    ['enforce', 'enforce', 'enforce', 'enforce', 'warn', 'enforce'],
    [line('app', pointsAt([1, 3, 4, 6]))],
  );
  const segments = modeSegments(doc, doc.lines[0]);
  assert.deepEqual(
    segments.map((s) => [s.mode, s.from, s.to]),
    [
      ['enforce', 0, 3],
      ['enforce', 5, 5],
    ],
    'the warn campaign without a point leaves no segment, but cuts the line',
  );
  assert.deepEqual(
    segments[0].points.map((p) => p?.campaign_id ?? null),
    [1, null, 3, 4, null, null],
  );
});

test('a series is drawn one chart per cell, each target a line per gate mode', () => {
  const doc = modeDoc(
    ['enforce', 'warn', 'enforce'],
    [
      line('app', pointsAt([1, 2, 3])),
      line('nginx', pointsAt([1, 2, 3])),
      { ...line('app', pointsAt([1, 2])), load_level: 'c8' },
    ],
  );
  const cells = seriesCells(doc);
  assert.deepEqual(
    cells.map((c) => [c.label, c.lines.map((l) => l.target)]),
    [
      ['json · 64 connections', ['app', 'nginx']],
      ['json · 8 connections', ['app']],
    ],
  );
  assert.equal(
    cellLabelOf({ pair: 'srv-1', scenario: 'json', load_level: 'c64' }),
    'on srv-1: json · 64 connections',
  );
  const sets = cellDatasets(doc, cells[0]);
  assert.deepEqual(
    sets.map((d) => [d.target, d.colour, d.mode, d.legend, d.label]),
    [
      ['app', 0, 'enforce', true, 'app'],
      ['app', 0, 'warn', true, 'app (gates in warn mode: not judged)'],
      ['app', 0, 'enforce', false, 'app'],
      ['nginx', 1, 'enforce', true, 'nginx'],
      ['nginx', 1, 'warn', true, 'nginx (gates in warn mode: not judged)'],
      ['nginx', 1, 'enforce', false, 'nginx'],
    ],
  );
  assert.deepEqual(
    sets.map((d) => d.words),
    [1, 2].flatMap(() => ['gates enforced', 'gates in warn mode: not judged', 'gates enforced']),
  );
  // Each dataset has values only at its own campaigns: no line between modes.
  assert.deepEqual(sets[0].data, [1001, null, null]);
  assert.deepEqual(sets[1].data, [null, 1002, null]);
  assert.deepEqual(sets[2].data, [null, null, 1003]);
  assert.deepEqual(sets[1].whiskers[1], { min: 1002 * 0.99, max: 1002 * 1.01 });
  // The cell's changes are every target's, in campaign order.
  doc.changes = [
    change('nginx', 'm-2', 'm-3', 'suspected'),
    change('app', 'm-1', 'm-2', 'confirmed'),
  ];
  assert.deepEqual(
    changesOfCell(doc, cells[0]).map((c) => c.target),
    ['app', 'nginx'],
  );
  assert.match(changeMarker(doc, doc.changes[0], true).label, /^nginx: regression /);
  assert.doesNotMatch(changeMarker(doc, doc.changes[0]).label, /nginx/);
});
