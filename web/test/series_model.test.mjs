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
