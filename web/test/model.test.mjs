// The campaign page's pure logic (web/src/model.js, web/src/format.js) on small records built
// here: the heat map's layout, the sentences that say who won, the noise floor in words.
// Run: node --test web/test/

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  heatmapLayout,
  plannedRounds,
  summary,
  noiseFloorLines,
  ratioSeries,
  metricSeries,
  isLive,
  problemAttempts,
  logBins,
  loadRates,
} from '../src/model.js';
import { fmtUs, fmtInt, levelLabel, windowName, fmtAge, fmtRatio } from '../src/format.js';

const summary1 = (median, min = median, max = median, n = 2) => ({
  n,
  ignored: 0,
  median,
  min,
  max,
  spread_pct: 0,
});

function attempt(id, verdict, extra = {}) {
  return {
    id,
    attempt: 1,
    newest: true,
    verdict,
    reasons: verdict === 'valid' ? [] : [`foreign_cpu: server host 60% > 25%`],
    rps: 1000,
    ...extra,
  };
}

function win(target, level, round, attempts, extra = {}) {
  return {
    pair: '',
    target,
    scenario: 'hello',
    load_level: level,
    connections: Number(level.slice(1)),
    round,
    position: 0,
    noise: false,
    attempts,
    ...extra,
  };
}

function record() {
  const vs = (median, min, max, verdict, won, rounds) => ({
    verdict,
    reason: 'why',
    ratio: summary1(median, min, max),
    rounds_won: won,
    rounds_lost: rounds - won,
    noise_floor: 0.04,
    rounds: Array.from({ length: rounds }, (_, i) => ({
      round: i + 1,
      target: 1,
      baseline: 1,
      ratio: median,
    })),
  });
  return {
    campaign: { name: 'hello', state: 'done', baseline: 'nginx', total_windows: 9 },
    spec: 'name = "hello"\n[matrix]\nconnections = [8, 32]\nrounds = 2\n[[target]]\nname = "nginx"\n',
    targets: ['nginx', 'hello-server'],
    noise_floor: [{ pair: '', windows: 0, valid: 0, metrics: { rps: null } }],
    cells: ['c8', 'c32'].map((level) => ({
      pair: '',
      scenario: 'hello',
      load_level: level,
      targets: [
        {
          target: 'nginx',
          baseline: true,
          windows: 2,
          valid: 2,
          metrics: {
            rps: {
              ...summary1(100000, 90000, 110000),
              vs_baseline: {
                verdict: 'n/a',
                reason: 'the baseline itself',
                ratio: summary1(null, null, null, 0),
                rounds_won: 0,
                rounds_lost: 0,
                noise_floor: null,
                rounds: [],
              },
            },
          },
        },
        {
          target: 'hello-server',
          baseline: false,
          windows: 2,
          valid: 2,
          metrics: {
            rps: {
              ...summary1(112000, 100000, 120000),
              vs_baseline:
                level === 'c8'
                  ? vs(1.12, 1.12, 1.12, 'ahead', 2, 2)
                  : vs(1.01, 0.97, 1.04, 'close', 1, 2),
            },
          },
        },
      ],
    })),
    windows: [
      win('nginx', 'c8', 1, [attempt(1, 'valid')]),
      win('hello-server', 'c8', 1, [
        { ...attempt(2, 'invalid'), newest: false },
        { ...attempt(9, 'valid'), attempt: 2 },
      ]),
      win('nginx', 'c32', 1, [attempt(3, 'failed')]),
      win('hello-server', 'c32', 1, [attempt(4, 'valid')]),
      win('nginx', 'c8', 2, [attempt(5, 'valid')]),
      win('hello-server', 'c8', 2, [attempt(6, 'invalid')]),
      win('nginx', 'c8', 0, [attempt(7, 'valid')], { noise: true, position: 0 }),
      win('nginx', 'c8', 0, [attempt(8, 'valid')], { noise: true, position: 1 }),
    ],
  };
}

test('the heat map has one cell per window, placed by target, level and round', () => {
  const rec = record();
  const layout = heatmapLayout(rec, { running: [] });
  assert.equal(layout.count, rec.windows.length);
  assert.equal(layout.rounds, 2);
  assert.deepEqual(
    layout.groups.map((g) => g.load_level),
    ['c8', 'c32'],
  );
  assert.equal(layout.columns.length, 4);
  assert.deepEqual(
    layout.rows.map((r) => r.target),
    ['nginx', 'hello-server'],
  );
  const matrixCells = layout.rows.flatMap((r) => [...r.slots.values()].flat());
  assert.equal(matrixCells.length, 6);
  assert.equal(layout.noiseRows.length, 1);
  assert.equal(layout.noiseRows[0].entries.length, 2);
  // The newest attempt counts: window 2 was re-run as 9.
  const rerun = layout.rows[1].slots.get('hello\u0000c8\u00001')[0];
  assert.equal(rerun.attempt.id, 9);
  assert.equal(rerun.verdict, 'valid');
  // Nothing in a slot that was not measured (hello-server, c32, round 2).
  assert.equal(layout.rows[1].slots.get('hello\u0000c32\u00002'), undefined);
});

test('windows being measured: a re-run marks its cell, a new one gets a cell of its own', () => {
  const rec = record();
  const running = [
    {
      pair: '',
      target: 'hello-server',
      scenario: 'hello',
      load_level: 'c8',
      round: 2,
      position: 0,
      noise: false,
      attempt: 2,
      server_agent: 's',
      load_agent: 'l',
    },
    {
      pair: '',
      target: 'hello-server',
      scenario: 'hello',
      load_level: 'c32',
      round: 2,
      position: 0,
      noise: false,
      attempt: 1,
      server_agent: 's',
      load_agent: 'l',
    },
  ];
  const layout = heatmapLayout(rec, { running });
  assert.equal(layout.count, rec.windows.length + 1);
  const marked = layout.rows[1].slots.get('hello\u0000c8\u00002')[0];
  assert.equal(marked.verdict, 'invalid');
  assert.ok(marked.running);
  const fresh = layout.rows[1].slots.get('hello\u0000c32\u00002')[0];
  assert.equal(fresh.verdict, 'running');
  assert.equal(fresh.attempt, null);
});

test('rounds come from the spec, or from the windows when the spec does not say', () => {
  assert.equal(plannedRounds(record()), 2);
  assert.equal(
    plannedRounds({ spec: '[matrix]\nrounds = 5\n[load]\nrounds = 9\n', windows: [] }),
    5,
  );
  assert.equal(
    plannedRounds({ spec: '[load]\nthreads = 1\n', windows: [win('a', 'c1', 3, [])] }),
    3,
  );
});

test('each cell says who won and by how much, in plain words', () => {
  const s = summary(record());
  assert.equal(s.cells.length, 2);
  const [c8, c32] = s.cells.map((c) => c.lines[0]);
  assert.equal(c8.text, 'hello · c8: hello-server 1.12× nginx (1.12–1.12), ahead, won 2/2 rounds');
  assert.match(c8.plain, /12% more requests per second than nginx/);
  assert.equal(c32.verdict, 'close');
  assert.match(c32.plain, /Too close to call/);
  assert.equal(
    s.headlines[0].text,
    'hello-server vs nginx: ahead in 1, too close to call in 1 of 2 cells.',
  );
});

test('the noise floor in words: none, too few valid windows, or the floor', () => {
  assert.match(
    noiseFloorLines(record())[0].text,
    /No noise floor: the campaign measured no noise windows/,
  );
  const queued = { ...record(), spec: `${record().spec}[noise]\ntarget = "nginx"\n`, windows: [] };
  assert.match(noiseFloorLines(queued)[0].text, /No noise floor yet: no noise window is stored/);
  const few = {
    ...record(),
    noise_floor: [{ pair: '', windows: 3, valid: 1, metrics: { rps: null } }],
  };
  assert.match(
    noiseFloorLines(few)[0].text,
    /1 of 3 noise windows .* were valid; at least 2 are needed/,
  );
  const floor = {
    ...record(),
    noise_floor: [
      {
        pair: '',
        windows: 3,
        valid: 3,
        metrics: { rps: { fraction: 0.042, values: summary1(100000, 98000, 102200, 3) } },
      },
    ],
  };
  const line = noiseFloorLines(floor)[0];
  assert.equal(line.fraction, 0.042);
  assert.match(
    line.text,
    /Noise floor ±4.2% of req\/s: 3 valid identical windows of nginx · hello · 8 connections ranged 98,000–102,200/,
  );
});

test('chart series: medians with min–max whiskers, ratios with the noise band', () => {
  const rps = metricSeries(record(), 'rps');
  assert.deepEqual(rps.labels, ['hello · c8', 'hello · c32']);
  assert.deepEqual(
    rps.datasets.map((d) => d.target),
    ['nginx', 'hello-server'],
  );
  assert.deepEqual(rps.datasets[1].whiskers[0], { min: 100000, max: 120000 });
  const ratio = ratioSeries(record());
  assert.deepEqual(
    ratio.datasets.map((d) => d.target),
    ['hello-server'],
  );
  assert.deepEqual(ratio.datasets[0].data, [1.12, 1.01]);
  assert.deepEqual(ratio.bands, [0.04, 0.04]);
});

test('live while queued, running, measuring or re-running; problems list every attempt not valid', () => {
  const rec = record();
  assert.equal(isLive(rec, { running: [], reruns_pending: 0 }), false);
  assert.equal(isLive(rec, { running: [{}], reruns_pending: 0 }), true);
  assert.equal(isLive(rec, { running: [], reruns_pending: 1 }), true);
  assert.equal(isLive({ campaign: { state: 'running' } }, {}), true);
  assert.deepEqual(
    problemAttempts(rec).map((p) => p.attempt.id),
    [2, 3, 6],
  );
});

test('figures and names as the report writes them', () => {
  assert.equal(fmtUs(58), '58 µs');
  assert.equal(fmtUs(1210), '1.21 ms');
  assert.equal(fmtUs(3_500_000), '3.50 s');
  assert.equal(fmtUs(null), '–');
  assert.equal(fmtInt(125387), '125,387');
  assert.equal(fmtRatio(1.1234), '1.12×');
  assert.equal(levelLabel('c8'), '8 connections');
  assert.equal(levelLabel('c1'), '1 connection');
  assert.equal(levelLabel('r5000'), '5,000 req/s open loop');
  assert.equal(fmtAge(420), '420 ms');
  assert.equal(fmtAge(65_000), '1 min 5 s');
  assert.equal(windowName(win('nginx', 'c8', 1, [])), 'round 1 · nginx · hello · c8');
  assert.equal(
    windowName({ ...win('nginx', 'c8', 0, []), noise: true, position: 1, pair: 'box1' }),
    'box1 · noise 2 · nginx · hello · c8',
  );
});

test('the histogram in even bins on a log axis keeps every request', () => {
  const buckets = [
    { from_us: 10, to_us: 10, count: 5 },
    { from_us: 11, to_us: 11, count: 7 },
    { from_us: 1000, to_us: 1007, count: 3 },
  ];
  const bins = logBins(buckets, 3);
  assert.equal(bins.length, 3);
  assert.equal(
    bins.reduce((n, b) => n + b.count, 0),
    15,
  );
  assert.equal(bins[0].count, 12);
  assert.equal(bins[2].count, 3);
  assert.ok(
    Math.abs(bins[1].to_us / bins[1].from_us - bins[0].to_us / bins[0].from_us) < 1e-9,
    'equal widths on a log axis',
  );
  assert.deepEqual(logBins([], 10), []);
});

test('per-second rates end at the window: a 0.25 s window is not a second long', () => {
  const full = loadRates(
    [
      { t_s: 1, requests: 1000 },
      { t_s: 2, requests: 1500 },
    ],
    2,
  );
  assert.deepEqual(
    full.map((s) => s.rps),
    [1000, 1500],
  );
  const short = loadRates([{ t_s: 1, requests: 250, p99_us: 90 }], 0.25);
  assert.equal(short[0].t_s, 0.25);
  assert.equal(short[0].rps, 1000);
  assert.equal(short[0].p99_us, 90);
  const last = loadRates(
    [
      { t_s: 1, requests: 1000 },
      { t_s: 2, requests: 500 },
    ],
    1.5,
  );
  assert.deepEqual(
    last.map((s) => s.rps),
    [1000, 1000],
  );
});
