// The campaign page's pure logic (web/src/model.js, web/src/format.js) on small records built
// here (run of record version 2, docs/report.md): the heat map's layout, the sentences that say
// who won with their intervals, the rounds per cell, the intervals charted, the noise floor in
// words.
// Run: node --test web/test/

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  heatmapLayout,
  plannedRounds,
  summary,
  comparison,
  cellRounds,
  statsOf,
  comparedMetrics,
  verdictWords,
  intervalText,
  intervalSeries,
  noiseFloorLines,
  metricSeries,
  isLive,
  problemAttempts,
  logBins,
  loadRates,
  serviceCpuRows,
  serviceLines,
  probeLines,
  gateAuditRows,
  hostFacts,
  gateJudgement,
  validCountText,
  perSecondNote,
} from '../src/model.js';
import {
  fmtUs,
  fmtInt,
  levelLabel,
  windowName,
  fmtAge,
  fmtRatio,
  fmtShare,
  fmtInterval,
} from '../src/format.js';

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

// vs_baseline as the report writes it: the interval's verdict and reason, the interval
// {n, level, estimate, low, high, log_sd}, rounds_needed, the noise-floor rule as context.
function vs({ estimate, low, high, verdict, n = 3, needed = null, won = n, noise = 'close' }) {
  return {
    verdict,
    reason: `ratio ${estimate} (95% CI ${low} to ${high}, ${n} rounds)`,
    interval: { n, level: 0.95, estimate, low, high, log_sd: 0.01 },
    rounds_needed: needed,
    noise_rule: { verdict: noise, reason: 'within the noise floor ±4%' },
    ratio: summary1(estimate, low, high, n),
    rounds_won: won,
    rounds_lost: n - won,
    noise_floor: 0.04,
    rounds: Array.from({ length: n }, (_, i) => ({
      round: i + 1,
      target: 1,
      baseline: 1,
      ratio: estimate,
    })),
  };
}

const notCompared = (reason) => ({
  verdict: 'n/a',
  reason,
  interval: null,
  rounds_needed: null,
  noise_rule: { verdict: 'n/a', reason },
  ratio: summary1(null, null, null, 0),
  rounds_won: 0,
  rounds_lost: 0,
  noise_floor: null,
  rounds: [],
});

const STATS = {
  confidence: 0.95,
  margin: 0.02,
  plan: 'fixed',
  min_rounds: 2,
  max_rounds: 2,
  looks: 1,
  level_per_look: 0.95,
  max_duration_s: null,
  decide_on: ['rps', 'cpu_us_per_request'],
};

function record() {
  return {
    campaign: { name: 'hello', state: 'done', baseline: 'nginx', total_windows: 9 },
    spec: 'name = "hello"\n[matrix]\nconnections = [8, 32]\nrounds = 2\n[[target]]\nname = "nginx"\n',
    targets: ['nginx', 'hello-server'],
    stats: STATS,
    noise_floor: [{ pair: '', windows: 0, valid: 0, metrics: { rps: null } }],
    cells: ['c8', 'c32'].map((level) => ({
      pair: '',
      scenario: 'hello',
      load_level: level,
      rounds: 2,
      stopped: 'fixed plan',
      targets: [
        {
          target: 'nginx',
          baseline: true,
          windows: 2,
          valid: 2,
          metrics: {
            rps: {
              ...summary1(100000, 90000, 110000),
              vs_baseline: notCompared('the baseline itself'),
            },
            cpu_us_per_request: {
              ...summary1(20, 19, 21),
              vs_baseline: notCompared('the baseline itself'),
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
                  ? vs({ estimate: 1.12, low: 1.08, high: 1.16, verdict: 'ahead', n: 2 })
                  : vs({ estimate: 1.005, low: 0.99, high: 1.015, verdict: 'close', n: 2, won: 1 }),
            },
            cpu_us_per_request: {
              ...summary1(18, 17, 19),
              vs_baseline:
                level === 'c8'
                  ? vs({ estimate: 0.9, low: 0.86, high: 0.94, verdict: 'ahead', n: 2, won: 2 })
                  : vs({
                      estimate: 1.01,
                      low: 0.9,
                      high: 1.12,
                      verdict: 'inconclusive',
                      n: 2,
                      needed: 12,
                      won: 1,
                    }),
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

test('rounds come from the plan, the spec, or from the windows when neither says', () => {
  assert.equal(plannedRounds(record()), 2);
  // An adaptive plan shows its minimum, and every round a cell went on to.
  const adaptive = { plan: 'adaptive', min_rounds: 3, max_rounds: 20 };
  assert.equal(plannedRounds({ stats: adaptive, windows: [] }), 3);
  assert.equal(plannedRounds({ stats: adaptive, windows: [win('a', 'c1', 5, [])] }), 5);
  assert.equal(plannedRounds({ stats: { plan: 'fixed', max_rounds: 7 }, windows: [] }), 7);
  assert.equal(
    plannedRounds({ spec: '[matrix]\nrounds = 5\n[load]\nrounds = 9\n', windows: [] }),
    5,
  );
  assert.equal(
    plannedRounds({ spec: '[load]\nthreads = 1\n', windows: [win('a', 'c1', 3, [])] }),
    3,
  );
});

test('each cell says who won, by how much and how sure, in plain words', () => {
  const s = summary(record());
  assert.equal(s.cells.length, 2);
  assert.deepEqual(s.metrics, ['rps', 'cpu_us_per_request']);
  const [c8rps, c8cpu] = s.cells[0].lines;
  const [c32rps, c32cpu] = s.cells[1].lines;
  assert.equal(c8rps.text, 'hello · c8: hello-server 1.12× nginx req/s (95% CI 1.08–1.16), ahead');
  assert.equal(
    c8rps.plain,
    'hello-server served 12% more requests per second than nginx (95% CI 8.0% to 16%).',
  );
  assert.equal(c8rps.won, 'won 2/2 rounds');
  assert.equal(c8rps.noise, 'noise-floor rule: close (within the noise floor ±4%)');
  // Lower is better for CPU per request: a ratio of 0.90 is ahead, and said as less CPU.
  assert.equal(c8cpu.figure, 'hello-server 0.90× nginx CPU µs/request (95% CI 0.86–0.94), ahead');
  assert.equal(
    c8cpu.plain,
    'hello-server used 10% less CPU per request than nginx (95% CI 6.0% to 14%).',
  );
  assert.equal(c32rps.verdict, 'close');
  assert.equal(
    c32rps.plain,
    'Equal within the margin ±2%: the 95% CI 0.99–1.01 lies inside 0.98–1.02.',
  );
  assert.equal(c32cpu.verdictText, 'inconclusive (~12 rounds)');
  assert.equal(
    c32cpu.figure,
    'hello-server 1.01× nginx CPU µs/request (95% CI 0.90–1.12), inconclusive (~12 rounds)',
  );
  assert.equal(c32cpu.plain, 'Not decided: more rounds would be needed (about 12).');
  assert.deepEqual(
    s.headlines.map((h) => h.text),
    [
      'hello-server vs nginx, req/s: ahead in 1, close (within ±2%) in 1 of 2 cells.',
      'hello-server vs nginx, CPU µs/request: ahead in 1, not decided in 1 of 2 cells.',
    ],
  );
});

// One comparison of req/s on a cell of its own.
const compare = (v, stats = statsOf({ stats: STATS })) =>
  comparison(
    { pair: '', scenario: 'hello', load_level: 'c8' },
    { target: 'b', metrics: { rps: { vs_baseline: v } } },
    'a',
    stats,
  );

test('every verdict states its interval: ahead, behind, close, inconclusive, n/a', () => {
  const behind = compare(vs({ estimate: 0.8, low: 0.75, high: 0.85, verdict: 'behind', won: 0 }));
  assert.equal(behind.figure, 'b 0.80× a req/s (95% CI 0.75–0.85), behind');
  assert.equal(behind.plain, 'b served 20% fewer requests per second than a (95% CI 15% to 25%).');
  assert.equal(behind.won, 'won 0/3 rounds');

  const ahead = compare(vs({ estimate: 1.05, low: 1.025, high: 1.075, verdict: 'ahead' }));
  assert.equal(ahead.figure, 'b 1.05× a req/s (95% CI 1.02–1.07), ahead');
  assert.equal(ahead.plain, 'b served 5.0% more requests per second than a (95% CI 2.5% to 7.5%).');

  const close = compare(vs({ estimate: 1.0, low: 0.995, high: 1.006, verdict: 'close' }));
  assert.equal(close.figure, 'b 1.00× a req/s (95% CI 0.99–1.01), close');
  assert.match(close.plain, /^Equal within the margin ±2%/);

  const undecided = compare(
    vs({ estimate: 1.03, low: 0.97, high: 1.09, verdict: 'inconclusive', needed: 9 }),
  );
  assert.equal(undecided.verdictText, 'inconclusive (~9 rounds)');
  assert.equal(undecided.figure, 'b 1.03× a req/s (95% CI 0.97–1.09), inconclusive (~9 rounds)');
  assert.equal(undecided.plain, 'Not decided: more rounds would be needed (about 9).');
  // No number of rounds up to 1000 would decide it: no estimate of rounds.
  const hopeless = compare(
    vs({ estimate: 1.03, low: 0.5, high: 2.1, verdict: 'inconclusive', needed: null }),
  );
  assert.equal(hopeless.verdictText, 'inconclusive');
  assert.match(hopeless.plain, /^Not decided: the interval reaches across the margin ±2%, and no/);

  // One round: the ratio, no interval, n/a.
  const one = compare({
    ...notCompared('fewer than 2 rounds with a ratio (1)'),
    ratio: summary1(1.2, 1.2, 1.2, 1),
    rounds: [{ round: 1, target: 1.2, baseline: 1, ratio: 1.2 }],
  });
  assert.equal(one.verdict, 'n/a');
  assert.equal(one.figure, 'b 1.20× a req/s (1 round, no interval), n/a');
  assert.equal(one.plain, 'Not compared: fewer than 2 rounds with a ratio (1).');
  const none = compare(undefined);
  assert.equal(none.figure, 'b vs a req/s: not compared');
  assert.equal(none.verdict, 'n/a');
});

test("the confidence in the label is the campaign's, not the per-look level", () => {
  // An adaptive plan's intervals are computed at the per-look level (say 98.6%) so that the
  // whole plan holds 95%: the page says 95%.
  const stats = statsOf({ stats: { ...STATS, plan: 'adaptive', level_per_look: 0.986 } });
  const v = vs({ estimate: 1.05, low: 1.03, high: 1.08, verdict: 'ahead' });
  v.interval.level = 0.986;
  assert.equal(intervalText(v, stats), '1.05× (95% CI 1.03–1.08)');
  assert.equal(
    compare(v, statsOf({ stats: { ...STATS, confidence: 0.9 } })).figure,
    'b 1.05× a req/s (90% CI 1.03–1.08), ahead',
  );
  assert.equal(intervalText(undefined, stats), '–');
  assert.equal(verdictWords(undefined), 'n/a');
});

test('interval formatting: shares and ranges as the report writes them', () => {
  assert.equal(fmtShare(0.95), '95%');
  assert.equal(fmtShare(0.975), '97.5%');
  assert.equal(fmtShare(0.02), '2%');
  assert.equal(fmtShare(0.025), '2.5%');
  assert.equal(fmtShare(null), '–');
  assert.equal(fmtInterval(1.0312, 1.0789, 0.95), '95% CI 1.03–1.08');
  assert.equal(fmtInterval(null, 1, 0.95), '95% CI –');
});

test('per cell: the rounds it took and why it stopped', () => {
  const adaptive = statsOf({
    stats: { ...STATS, plan: 'adaptive', min_rounds: 3, max_rounds: 20 },
  });
  assert.deepEqual(cellRounds({ rounds: 4, stopped: 'decided' }, adaptive), {
    stopped: 'decided',
    text: '4 rounds of 3–20: decided',
  });
  assert.equal(
    cellRounds({ rounds: 20, stopped: 'max rounds' }, adaptive).text,
    '20 rounds of 3–20: max rounds',
  );
  assert.equal(
    cellRounds({ rounds: 7, stopped: 'budget' }, adaptive).text,
    '7 rounds of 3–20: budget',
  );
  assert.equal(
    cellRounds({ rounds: 2, stopped: 'running' }, adaptive).text,
    '2 rounds so far of 3–20: running',
  );
  const fixed = statsOf({ stats: STATS });
  assert.deepEqual(cellRounds({ rounds: 1, stopped: 'fixed plan' }, fixed), {
    stopped: 'fixed plan',
    text: '1 round',
  });
  // A stored file that no longer parses: the record does not say.
  assert.equal(cellRounds({ rounds: null, stopped: null }, adaptive), null);
  assert.deepEqual(
    summary(record()).cells.map((c) => c.rounds.text),
    ['2 rounds', '2 rounds'],
  );
});

test('the figures compared: req/s first, then what the campaign decides on', () => {
  assert.deepEqual(comparedMetrics({ stats: { decide_on: ['p99_us'] } }), ['rps', 'p99_us']);
  assert.deepEqual(comparedMetrics({ stats: { decide_on: null } }), ['rps', 'cpu_us_per_request']);
  assert.deepEqual(comparedMetrics({ stats: { decide_on: ['rps', 'nonsense'] } }), ['rps']);
  // A record without stats: the report's defaults.
  const d = statsOf({});
  assert.equal(d.confidence, 0.95);
  assert.equal(d.margin, 0.02);
  assert.equal(d.plan, 'fixed');
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

test('chart series: medians with min–max whiskers, and intervals against the margin', () => {
  const rps = metricSeries(record(), 'rps');
  assert.deepEqual(rps.labels, ['hello · c8', 'hello · c32']);
  assert.deepEqual(
    rps.datasets.map((d) => d.target),
    ['nginx', 'hello-server'],
  );
  assert.deepEqual(rps.datasets[1].whiskers[0], { min: 100000, max: 120000 });

  const iv = intervalSeries(record(), 'rps');
  assert.deepEqual(iv.targets, ['hello-server']);
  assert.deepEqual(
    iv.rows.map((r) => [r.label, r.estimate, r.low, r.high, r.verdict, r.n, r.noise]),
    [
      ['hello · c8', 1.12, 1.08, 1.16, 'ahead', 2, 'close'],
      ['hello · c32', 1.005, 0.99, 1.015, 'close', 2, 'close'],
    ],
  );
  assert.equal(iv.margin, 0.02);
  assert.equal(iv.confidence, 0.95);
  // The axis holds every interval and the margin band.
  assert.equal(iv.min, 0.98);
  assert.equal(iv.max, 1.16);
  assert.equal(iv.log, false);
  assert.equal(iv.any, true);
  const cpu = intervalSeries(record(), 'cpu_us_per_request');
  assert.equal(cpu.rows[1].verdictText, 'inconclusive (~12 rounds)');

  // A row without an interval keeps its place, with nulls; ratios far apart go on a log axis.
  const rec = record();
  rec.cells[0].targets[1].metrics.rps.vs_baseline = notCompared(
    'fewer than 2 rounds with a ratio (1)',
  );
  rec.cells[1].targets[1].metrics.rps.vs_baseline = vs({
    estimate: 5,
    low: 4.5,
    high: 5.5,
    verdict: 'ahead',
  });
  const far = intervalSeries(rec, 'rps');
  assert.deepEqual(
    far.rows.map((r) => [r.estimate, r.verdict]),
    [
      [null, 'n/a'],
      [5, 'ahead'],
    ],
  );
  assert.equal(far.log, true);
  // Several targets: the rows name theirs.
  const two = record();
  for (const c of two.cells) c.targets.push({ ...c.targets[1], target: 'caddy' });
  assert.deepEqual(
    intervalSeries(two, 'rps').rows.map((r) => r.label),
    [
      'hello · c8 · hello-server',
      'hello · c8 · caddy',
      'hello · c32 · hello-server',
      'hello · c32 · caddy',
    ],
  );
  assert.equal(intervalSeries({ cells: [] }, 'rps').any, false);
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

// A campaign with a database beside each target (docs/services.md): the run of record has the
// services' figures then, and only then.
function withServices() {
  const rec = record();
  for (const cell of rec.cells) {
    const [nginx, hello] = cell.targets;
    nginx.metrics.service_cpu_us_per_request = {
      ...summary1(4, 3.5, 4.5),
      vs_baseline: notCompared('the baseline itself'),
    };
    nginx.metrics.total_cpu_us_per_request = {
      ...summary1(24, 23, 25),
      vs_baseline: notCompared('the baseline itself'),
    };
    hello.metrics.service_cpu_us_per_request = {
      ...summary1(6, 5, 7),
      vs_baseline: vs({ estimate: 1.5, low: 1.3, high: 1.7, verdict: 'behind', n: 2, won: 0 }),
    };
    hello.metrics.total_cpu_us_per_request = {
      ...summary1(24.5, 23, 26),
      vs_baseline: vs({ estimate: 1.02, low: 0.95, high: 1.1, verdict: 'inconclusive', n: 2 }),
    };
  }
  return rec;
}

test('CPU per request with side services: per cell and target, only when there are services', () => {
  assert.deepEqual(serviceCpuRows(record()), []);
  assert.deepEqual(serviceCpuRows({ cells: [] }), []);
  const rows = serviceCpuRows(withServices());
  assert.deepEqual(
    rows.map((r) => [
      r.cell.load_level,
      r.target,
      r.baseline,
      r.target_us,
      r.service_us,
      r.total_us,
    ]),
    [
      ['c8', 'nginx', true, 20, 4, 24],
      ['c8', 'hello-server', false, 18, 6, 24.5],
      ['c32', 'nginx', true, 20, 4, 24],
      ['c32', 'hello-server', false, 18, 6, 24.5],
    ],
  );
  assert.equal(rows[0].vs, null);
  assert.equal(intervalText(rows[1].vs, statsOf(withServices())), '1.02× (95% CI 0.95–1.10)');
  assert.equal(verdictWords(rows[1].vs), 'inconclusive');

  // A target without services in a campaign with them: its figures are missing, not 0.
  const half = withServices();
  for (const cell of half.cells) {
    cell.targets[0].metrics.service_cpu_us_per_request = summary1(null, null, null, 0);
    cell.targets[0].metrics.total_cpu_us_per_request = summary1(null, null, null, 0);
  }
  const first = serviceCpuRows(half)[0];
  assert.equal(first.target, 'nginx');
  assert.equal(first.target_us, 20);
  assert.equal(first.service_us, null);
  assert.equal(first.total_us, null);
});

test("a window's side services and probes in words, an unavailable rise with its reason", () => {
  assert.deepEqual(serviceLines({ services: [] }), []);
  assert.deepEqual(probeLines({}), []);
  const doc = {
    services: [
      {
        service: 'pg',
        cpu_user_s: 0.25,
        cpu_sys_s: 0.125,
        cpu_us_per_request: 7.5,
        rss_mean_kb: 30720,
        rss_peak_kb: 32768,
        cpu_accounting: 'cgroup',
        alive: true,
        exit: '',
        started: true,
        startup_ms: 812,
        reset_ms: 14.5,
      },
      {
        service: 'cache',
        cpu_user_s: 0,
        cpu_sys_s: 0,
        cpu_us_per_request: 0,
        rss_mean_kb: 900,
        rss_peak_kb: 1000,
        cpu_accounting: 'proc',
        alive: false,
        exit: 'killed by signal 9 (SIGKILL)',
        started: false,
        startup_ms: null,
        reset_ms: null,
      },
    ],
    probes: [
      { service: 'pg', probe: 'checkpoints', before: 3, after: 4, delta: 1, unavailable: '' },
      {
        service: 'pg',
        probe: 'vacuums',
        before: 120,
        after: 3,
        delta: null,
        unavailable: 'counter reset: 120 before, 3 after',
      },
    ],
  };
  const [pg, cache] = serviceLines(doc);
  assert.equal(pg.cpu, '0.375 s (0.25 user + 0.125 system, cgroup)');
  assert.equal(pg.per_request, '7.5 µs');
  assert.equal(pg.rss, '30.0 MiB mean, 32.0 MiB peak');
  assert.equal(pg.started, 'started for this window (ready in 812.0 ms)');
  assert.equal(pg.reset, '14.5 ms');
  assert.equal(pg.state, 'alive');
  assert.equal(cache.per_request, '0 µs'); // measured idle: 0 is a figure here
  assert.equal(cache.started, 'already running');
  assert.equal(cache.reset, 'none');
  assert.equal(cache.alive, false);
  assert.equal(cache.state, 'died: killed by signal 9 (SIGKILL)');

  const [checkpoints, vacuums] = probeLines(doc);
  assert.deepEqual(
    [checkpoints.before, checkpoints.after, checkpoints.delta, checkpoints.available],
    ['3', '4', '1', true],
  );
  assert.equal(checkpoints.why, '');
  assert.equal(vacuums.delta, 'unavailable');
  assert.equal(vacuums.available, false);
  assert.equal(vacuums.why, 'counter reset: 120 before, 3 after');
});

test('gateAuditRows: a row per gate and host, its shift, verdict and words; the windows measured again', () => {
  const record = {
    gate_audit: [
      {
        gate: 'selftest_drift',
        host: 'load (agent l1)',
        refused: 7,
        windows: 24,
        verdict: 'noise',
        rps: {
          refused_off_pct: 6.14,
          valid_off_pct: 5.8,
          shift_points: 0.3,
          shift_low: -2.1,
          shift_high: 3,
        },
        cpu_us_per_request: { refused_off_pct: 12.5, valid_off_pct: null, shift_points: null },
        words: 'selftest_drift refused 7 of 24 windows on host load (agent l1); ...',
      },
      { gate: 'error_rate', host: '', refused: 1, windows: 24, verdict: 'undecided', words: 'x' },
    ],
    remeasured: { windows: 3, by_gate: { foreign_cpu: 1, selftest_drift: 2 } },
  };
  const { rows, remeasured } = gateAuditRows(record);
  assert.equal(rows.length, 2);
  assert.equal(rows[0].refused, '7 of 24');
  assert.equal(rows[0].rps, '6.1% vs 5.8%');
  assert.equal(rows[0].rpsShift, '+0.3 [-2.1, +3.0]');
  assert.equal(rows[0].cpu, '13% vs –');
  assert.equal(rows[0].cpuShift, '–');
  assert.equal(rows[0].verdict, 'noise');
  assert.equal(rows[1].host, 'window');
  assert.equal(
    remeasured,
    '3 windows were measured again after a gate refused them (foreign_cpu 1, selftest_drift 2).',
  );
  assert.deepEqual(gateAuditRows({}), { rows: [], remeasured: '' });
});

test('hostFacts: the host check findings become rows of their own, with a status that is not ok', () => {
  const facts = hostFacts({
    governor: 'unavailable',
    findings: [
      { name: 'aslr', value: '2', status: 'warn', why: '...' },
      { name: 'swap', value: 'none', status: 'ok' },
      { name: 'governor', value: 'unavailable', status: 'unavailable' },
      { value: 'no name' },
    ],
  });
  assert.deepEqual(facts, {
    governor: 'unavailable',
    'check: governor': 'unavailable',
    'check: aslr': '2 (warn)',
    'check: swap': 'none',
  });
});

test('only a campaign judged with its gates enforced has valid windows', () => {
  assert.deepEqual(gateJudgement('enforce'), {
    mode: 'enforce',
    judged: true,
    words: 'gates enforced',
  });
  assert.equal(gateJudgement('warn').judged, false);
  assert.equal(gateJudgement('warn').mode, 'warn');
  // A mode not known (a stored file that no longer parses) is not judged either.
  for (const unknown of [null, undefined, '', 'sometimes']) {
    assert.equal(gateJudgement(unknown).mode, 'unknown', String(unknown));
    assert.equal(gateJudgement(unknown).judged, false, String(unknown));
  }
  assert.equal(validCountText(24, 'enforce'), '24 valid');
  assert.equal(validCountText(1200, 'enforce'), '1,200 valid');
  assert.equal(validCountText(24, 'warn'), '24 windows, gates in warn mode: not judged');
  assert.equal(validCountText(1, 'warn'), '1 window, gates in warn mode: not judged');
  assert.equal(validCountText(3, null), '3 windows, gate mode unknown: not judged');
  assert.doesNotMatch(validCountText(24, 'warn'), /valid/);
});

test('a per-second chart of one sample says what it cannot show', () => {
  const one = [{ t_s: 1, rps: 5000, p99_us: 200 }];
  assert.equal(
    perSecondNote(one, 1),
    '1 s window: the load generator records one sample per second, so this chart has a single point and shows no course over the window; see the key figures above.',
  );
  assert.match(perSecondNote(one, 0.25), /^0\.25 s window: /);
  assert.match(perSecondNote(one, null), /^A window of one second or less: /);
  // Two samples draw a course; none are said to be missing elsewhere.
  assert.equal(perSecondNote([...one, { t_s: 2, rps: 5100, p99_us: 210 }], 2), null);
  assert.equal(perSecondNote([], 1), null);
  assert.equal(perSecondNote(undefined, 1), null);
});
