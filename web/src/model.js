// What the campaign page shows, worked out from the run of record and the progress document
// (docs/api.md, docs/report.md): pure functions, no DOM, so each can be read and checked alone.

import {
  isNum,
  fmtRatio,
  fmtRange,
  fmtInterval,
  fmtShare,
  levelLabel,
  cellLabel,
  shortCellLabel,
  windowName,
  fmtPct,
  fmtNum,
  fmtKb,
  fmtMs,
} from './format.js';

export const VERDICTS = ['valid', 'invalid', 'failed', 'skipped', 'running'];

export function newestAttempt(window) {
  const attempts = window.attempts ?? [];
  return attempts.find((a) => a.newest) ?? attempts[attempts.length - 1] ?? null;
}

function sameWindow(a, b) {
  return (
    (a.pair ?? '') === (b.pair ?? '') &&
    a.target === b.target &&
    a.scenario === b.scenario &&
    a.load_level === b.load_level &&
    a.round === b.round &&
    a.position === b.position &&
    Boolean(a.noise) === Boolean(b.noise)
  );
}

function uniq(values) {
  return [...new Set(values)];
}

// Rounds planned: a fixed plan's rounds (`stats.max_rounds`, else `rounds = N` of the spec's
// [matrix]), an adaptive plan's minimum, or the most a window shows.
export function plannedRounds(record) {
  const seenRounds = (record.windows ?? []).filter((w) => !w.noise).map((w) => w.round);
  const stats = record.stats;
  if (stats && isNum(stats.max_rounds)) {
    const planned = stats.plan === 'adaptive' ? stats.min_rounds : stats.max_rounds;
    return Math.max(isNum(planned) ? planned : 0, ...seenRounds, 1);
  }
  const spec = record.spec ?? '';
  const matrix = /^\s*\[matrix\][^\n]*\n([\s\S]*?)(?=^\s*\[|(?![\s\S]))/m.exec(spec);
  const m = matrix && /^\s*rounds\s*=\s*(\d+)/m.exec(matrix[1]);
  return Math.max(m ? Number(m[1]) : 0, ...seenRounds, 1);
}

// The heat map: one cell per window (its newest attempt), plus the windows being measured now
// that have no stored attempt yet. Rows are targets (per pair), columns scenario · level · round
// in the campaign file's order; noise windows get rows of their own, one column per position.
export function heatmapLayout(record, progress) {
  const windows = record.windows ?? [];
  const running = progress?.running ?? [];
  const cells = record.cells ?? [];
  const pairs = uniq([
    ...cells.map((c) => c.pair ?? ''),
    ...windows.map((w) => w.pair ?? ''),
    ...running.map((r) => r.pair ?? ''),
  ]);
  const matrixWindows = windows.filter((w) => !w.noise);
  const levels = uniq([
    ...cells.map((c) => `${c.scenario}\u0000${c.load_level}`),
    ...matrixWindows.map((w) => `${w.scenario}\u0000${w.load_level}`),
    ...running.filter((r) => !r.noise).map((r) => `${r.scenario}\u0000${r.load_level}`),
  ]);
  const rounds = plannedRounds(record);
  const groups = levels.map((key) => {
    const [scenario, load_level] = key.split('\u0000');
    return { key, scenario, load_level, label: `${scenario} · ${levelLabel(load_level)}` };
  });
  const columns = [];
  for (const g of groups) {
    for (let round = 1; round <= rounds; round++) {
      columns.push({
        key: `${g.key}\u0000${round}`,
        group: g.key,
        scenario: g.scenario,
        load_level: g.load_level,
        round,
      });
    }
  }
  const targets = uniq([
    ...(record.targets ?? []),
    ...windows.map((w) => w.target),
    ...running.map((r) => r.target),
  ]);
  const rows = [];
  const rowOf = new Map();
  for (const pair of pairs) {
    for (const target of targets) {
      const used =
        matrixWindows.some((w) => (w.pair ?? '') === pair && w.target === target) ||
        cells.some((c) => (c.pair ?? '') === pair && c.targets.some((t) => t.target === target)) ||
        running.some((r) => !r.noise && (r.pair ?? '') === pair && r.target === target);
      if (!used) continue;
      const row = {
        key: `${pair}\u0000${target}`,
        pair,
        target,
        label: pair ? `${pair} · ${target}` : target,
        baseline: target === record.campaign?.baseline,
        slots: new Map(),
      };
      rows.push(row);
      rowOf.set(row.key, row);
    }
  }

  const entries = []; // {window|null, attempt|null, verdict, running}
  for (const w of windows) {
    const attempt = newestAttempt(w);
    const run = running.find((r) => sameWindow(r, w));
    entries.push({
      window: w,
      attempt,
      verdict: attempt?.verdict ?? 'skipped',
      running: run ?? null,
    });
  }
  for (const r of running) {
    if (!windows.some((w) => sameWindow(r, w)))
      entries.push({ window: r, attempt: null, verdict: 'running', running: r });
  }

  const noiseRows = [];
  for (const e of entries) {
    const w = e.window;
    if (w.noise) {
      const key = `${w.pair ?? ''}\u0000${w.target}\u0000${w.scenario}\u0000${w.load_level}`;
      let row = noiseRows.find((n) => n.key === key);
      if (!row) {
        row = {
          key,
          pair: w.pair ?? '',
          target: w.target,
          scenario: w.scenario,
          load_level: w.load_level,
          label: `${w.pair ? `${w.pair} · ` : ''}noise: ${w.target} · ${w.scenario} · ${w.load_level}`,
          entries: [],
        };
        noiseRows.push(row);
      }
      row.entries.push(e);
      continue;
    }
    const row = rowOf.get(`${w.pair ?? ''}\u0000${w.target}`);
    const col = `${w.scenario}\u0000${w.load_level}\u0000${w.round}`;
    if (!row) continue; // cannot happen: every window's target has a row
    if (!row.slots.has(col)) row.slots.set(col, []);
    row.slots.get(col).push(e);
  }
  for (const row of noiseRows) row.entries.sort((a, b) => a.window.position - b.window.position);
  return { groups, rounds, columns, rows, noiseRows, count: entries.length };
}

// A tooltip for a heat-map cell: the window's name, verdict and first reasons.
export function cellTitle(entry) {
  const w = entry.window;
  const lines = [windowName(w)];
  if (entry.attempt) {
    lines.push(
      `${entry.attempt.verdict} · attempt ${entry.attempt.attempt} · id ${entry.attempt.id}`,
    );
    if (isNum(entry.attempt.rps))
      lines.push(`${Math.round(entry.attempt.rps).toLocaleString('en-US')} req/s`);
    for (const reason of (entry.attempt.reasons ?? []).slice(0, 4)) lines.push(reason);
  }
  if (entry.running)
    lines.push(`measuring now: attempt ${entry.running.attempt} on ${entry.running.server_agent}`);
  return lines.join('\n');
}

// The figures a comparison can be about, with the words for a difference in each: a target
// "served 5.0% more requests per second than nginx". `higher`: whether more is better.
export const METRICS = {
  rps: {
    label: 'req/s',
    verb: 'served',
    up: 'more requests per second',
    down: 'fewer requests per second',
    higher: true,
  },
  cpu_us_per_request: {
    label: 'CPU µs/request',
    verb: 'used',
    up: 'more CPU per request',
    down: 'less CPU per request',
    higher: false,
  },
  requests_per_cpu_s: {
    label: 'req per CPU-s',
    verb: 'served',
    up: 'more requests per CPU-second',
    down: 'fewer requests per CPU-second',
    higher: true,
  },
  p50_us: {
    label: 'p50',
    verb: 'had',
    up: 'higher p50 latency',
    down: 'lower p50 latency',
    higher: false,
  },
  p99_us: {
    label: 'p99',
    verb: 'had',
    up: 'higher p99 latency',
    down: 'lower p99 latency',
    higher: false,
  },
  service_cpu_us_per_request: {
    label: 'services CPU µs/request',
    verb: 'made its services use',
    up: 'more CPU per request',
    down: 'less CPU per request',
    higher: false,
  },
  total_cpu_us_per_request: {
    label: 'total CPU µs/request',
    verb: 'used, with its services,',
    up: 'more CPU per request',
    down: 'less CPU per request',
    higher: false,
  },
};

// The verdicts of an interval against the margin (docs/report.md, `vs_baseline.verdict`).
export const COMPARISON_VERDICTS = ['ahead', 'behind', 'close', 'inconclusive', 'n/a'];

// How the verdicts were reached (the run of record's `stats`), with the report's defaults for a
// record that does not say.
export function statsOf(record) {
  const s = record.stats ?? {};
  return {
    confidence: isNum(s.confidence) ? s.confidence : 0.95,
    margin: isNum(s.margin) ? s.margin : 0.02,
    plan: s.plan ?? 'fixed',
    min_rounds: s.min_rounds ?? null,
    max_rounds: s.max_rounds ?? null,
    looks: s.looks ?? 1,
    level_per_look: s.level_per_look ?? null,
    decide_on: s.decide_on ?? null,
  };
}

// The figures the page compares: those the campaign decides on (`stats.decide_on`, by default
// req/s and CPU per request), req/s always first.
export function comparedMetrics(record) {
  const decide = record.stats?.decide_on ?? ['rps', 'cpu_us_per_request'];
  return uniq(['rps', ...decide.filter((m) => m in METRICS)]);
}

// "inconclusive (~12 rounds)" when more rounds would settle it, else the verdict itself.
export function verdictWords(vs) {
  const verdict = vs?.verdict ?? 'n/a';
  return verdict === 'inconclusive' && isNum(vs?.rounds_needed)
    ? `${verdict} (~${vs.rounds_needed} rounds)`
    : verdict;
}

// The ratio and what stands behind it: {ratio: "1.05×", behind: "95% CI 1.03–1.08"}; the median
// ratio with its rounds when there is no interval (fewer than 2 rounds); null when nothing was
// compared.
function intervalParts(vs, stats) {
  const iv = vs?.interval;
  if (iv && isNum(iv.estimate))
    return { ratio: fmtRatio(iv.estimate), behind: fmtInterval(iv.low, iv.high, stats.confidence) };
  const n = vs?.ratio?.n ?? 0;
  if (isNum(vs?.ratio?.median))
    return {
      ratio: fmtRatio(vs.ratio.median),
      behind: `${n} round${n === 1 ? '' : 's'}, no interval`,
    };
  return null;
}

// The ratio with its interval, "1.05× (95% CI 1.03–1.08)", or "–".
export function intervalText(vs, stats) {
  const p = intervalParts(vs, stats);
  return p ? `${p.ratio} (${p.behind})` : '–';
}

// A difference as a share, two ratios' worth: "5.0%" below 10%, "12%" from 10% (0.90 is 10%
// less, not "10.0%").
const share = (r) => {
  const pct = Math.abs(r - 1) * 100;
  return fmtPct(pct, pct < 9.95 ? 1 : 0);
};

// One line per target, cell and figure that says who won and by how much, in plain words, with
// the interval behind it; the noise-floor rule's verdict follows as context.
export function comparison(cell, t, baseline, stats, metric = 'rps') {
  const words = METRICS[metric];
  const vs = t.metrics?.[metric]?.vs_baseline;
  const verdict = vs?.verdict ?? 'n/a';
  const iv = vs?.interval ?? null;
  const conf = fmtShare(stats.confidence);
  const margin = `±${fmtShare(stats.margin)}`;
  const p = intervalParts(vs, stats);
  const figure = p
    ? `${t.target} ${p.ratio} ${baseline} ${words.label} (${p.behind}), ${verdictWords(vs)}`
    : `${t.target} vs ${baseline} ${words.label}: not compared`;
  let plain;
  if ((verdict === 'ahead' || verdict === 'behind') && iv) {
    const up = iv.estimate >= 1;
    const word = up ? words.up : words.down;
    const [a, b] = up ? [iv.low, iv.high] : [iv.high, iv.low];
    plain = `${t.target} ${words.verb} ${share(iv.estimate)} ${word} than ${baseline} (${conf} CI ${share(a)} to ${share(b)}).`;
  } else if (verdict === 'close' && iv) {
    plain = `Equal within the margin ${margin}: the ${conf} CI ${fmtRange(iv.low, iv.high)} lies inside ${fmtRange(1 - stats.margin, 1 + stats.margin)}.`;
  } else if (verdict === 'inconclusive') {
    plain = isNum(vs?.rounds_needed)
      ? `Not decided: more rounds would be needed (about ${vs.rounds_needed}).`
      : `Not decided: the interval reaches across the margin ${margin}, and no number of rounds up to 1000 would decide it at this spread.`;
  } else plain = `Not compared: ${vs?.reason ?? 'no figures'}.`;
  const noise = vs?.noise_rule
    ? `noise-floor rule: ${vs.noise_rule.verdict}${vs.noise_rule.reason ? ` (${vs.noise_rule.reason})` : ''}`
    : null;
  const rounds = vs?.rounds?.length ?? vs?.ratio?.n ?? 0;
  return {
    cell,
    target: t.target,
    metric,
    verdict,
    verdictText: verdictWords(vs),
    interval: iv,
    figure,
    plain,
    noise,
    won: rounds ? `won ${vs?.rounds_won ?? 0}/${rounds} round${rounds === 1 ? '' : 's'}` : null,
    text: `${shortCellLabel(cell)}: ${figure}`,
  };
}

// The rounds a cell took and why it stopped: "3 rounds of 3–20: decided" under an adaptive
// plan, "3 rounds" under a fixed one; null when the record does not say.
export function cellRounds(cell, stats) {
  if (!isNum(cell.rounds)) return null;
  const n = `${cell.rounds} round${cell.rounds === 1 ? '' : 's'}`;
  if (stats.plan !== 'adaptive') return { stopped: cell.stopped ?? 'fixed plan', text: n };
  const range = `${stats.min_rounds}–${stats.max_rounds}`;
  if (cell.stopped === 'running')
    return { stopped: 'running', text: `${n} so far of ${range}: running` };
  return {
    stopped: cell.stopped ?? null,
    text: `${n} of ${range}${cell.stopped ? `: ${cell.stopped}` : ''}`,
  };
}

// Every cell's comparisons, one per target and compared figure, and a headline per target and
// figure ("hello-server vs nginx, req/s: ahead in 3, close in 1 of 4 cells.").
export function summary(record) {
  const baseline = record.campaign?.baseline ?? null;
  const stats = statsOf(record);
  const metrics = comparedMetrics(record);
  const cells = (record.cells ?? []).map((cell) => ({
    cell,
    label: cellLabel(cell),
    rounds: cellRounds(cell, stats),
    lines: baseline
      ? cell.targets
          .filter((t) => !t.baseline)
          .flatMap((t) => metrics.map((m) => comparison(cell, t, baseline, stats, m)))
      : [],
  }));
  const tally = new Map();
  for (const c of cells)
    for (const line of c.lines) {
      const key = `${line.target}\u0000${line.metric}`;
      if (!tally.has(key))
        tally.set(key, { target: line.target, metric: line.metric, cells: 0, verdicts: {} });
      const t = tally.get(key);
      t.verdicts[line.verdict] = (t.verdicts[line.verdict] ?? 0) + 1;
      t.cells++;
    }
  const said = {
    ahead: 'ahead',
    behind: 'behind',
    close: `close (within ±${fmtShare(stats.margin)})`,
    inconclusive: 'not decided',
    'n/a': 'not compared',
  };
  const headlines = [...tally.values()].map((t) => {
    const parts = COMPARISON_VERDICTS.filter((v) => t.verdicts[v]).map(
      (v) => `${said[v]} in ${t.verdicts[v]}`,
    );
    return {
      target: t.target,
      metric: t.metric,
      tally: t.verdicts,
      text: `${t.target} vs ${baseline}, ${METRICS[t.metric].label}: ${parts.join(', ')} of ${t.cells} cell${t.cells === 1 ? '' : 's'}.`,
    };
  });
  return { baseline, stats, metrics, cells, headlines };
}

// The noise floor of each pair in words.
export function noiseFloorLines(record) {
  const floors = record.noise_floor ?? [];
  if (floors.length === 0)
    return [
      { pair: '', fraction: null, text: 'No noise floor: the campaign measured no noise windows.' },
    ];
  return floors.map((nf) => {
    const where = nf.pair ? `${nf.pair}: ` : '';
    const noise = (record.windows ?? []).find((w) => w.noise && (w.pair ?? '') === (nf.pair ?? ''));
    const cell = noise
      ? `${noise.target} · ${noise.scenario} · ${levelLabel(noise.load_level)}`
      : null;
    const rps = nf.metrics?.rps;
    if (!nf.windows && /^\s*\[noise\]/m.test(record.spec ?? '')) {
      return {
        pair: nf.pair,
        fraction: null,
        text: `${where}No noise floor yet: no noise window is stored. The campaign's [noise] table asks for some; the floor is measured from them.`,
      };
    }
    if (!nf.windows) {
      return {
        pair: nf.pair,
        fraction: null,
        text: `${where}No noise floor: the campaign measured no noise windows (no [noise] table). The verdicts come from the intervals; the noise floor would only be context.`,
      };
    }
    if (!rps) {
      return {
        pair: nf.pair,
        fraction: null,
        text: `${where}No noise floor: ${nf.valid} of ${nf.windows} noise windows (${cell}) were valid; at least 2 are needed. The verdicts come from the intervals; the noise floor would only be context.`,
      };
    }
    const v = rps.values ?? {};
    return {
      pair: nf.pair,
      fraction: rps.fraction,
      text: `${where}Noise floor ±${fmtPct(rps.fraction * 100)} of req/s: ${nf.valid} valid identical windows of ${cell} ranged ${Math.round(v.min ?? NaN).toLocaleString('en-US')}–${Math.round(v.max ?? NaN).toLocaleString('en-US')} req/s (median ${Math.round(v.median ?? NaN).toLocaleString('en-US')}). Context only: the verdicts come from each comparison's interval and the margin.`,
    };
  });
}

// Bars with whiskers of one metric: per cell (x) and target (dataset), the median and min–max.
export function metricSeries(record, metric) {
  const cells = record.cells ?? [];
  const targets = uniq(cells.flatMap((c) => c.targets.map((t) => t.target)));
  return {
    labels: cells.map(shortCellLabel),
    datasets: targets.map((target) => {
      const stats = cells.map(
        (c) => c.targets.find((t) => t.target === target)?.metrics?.[metric] ?? null,
      );
      return {
        target,
        data: stats.map((s) => (isNum(s?.median) ? s.median : null)),
        whiskers: stats.map((s) =>
          isNum(s?.min) && isNum(s?.max) ? { min: s.min, max: s.max } : null,
        ),
        n: stats.map((s) => s?.n ?? 0),
      };
    }),
  };
}

// One figure's ratios to the baseline as intervals, for a forest plot against the margin band:
// a row per cell and non-baseline target (cells in the record's order), each with the interval's
// estimate and ends, or nulls when there is none; `log` when the values span more than 4× (a log
// axis keeps 1/2 and 2 alike).
export function intervalSeries(record, metric = 'rps') {
  const stats = statsOf(record);
  const targets = uniq(
    (record.cells ?? []).flatMap((c) => c.targets.filter((t) => !t.baseline).map((t) => t.target)),
  );
  const rows = [];
  for (const cell of record.cells ?? []) {
    for (const t of cell.targets) {
      if (t.baseline) continue;
      const vs = t.metrics?.[metric]?.vs_baseline ?? null;
      const iv = vs?.interval ?? null;
      const ok = iv && isNum(iv.estimate) && isNum(iv.low) && isNum(iv.high);
      rows.push({
        cell,
        target: t.target,
        label: targets.length > 1 ? `${shortCellLabel(cell)} · ${t.target}` : shortCellLabel(cell),
        estimate: ok ? iv.estimate : null,
        low: ok ? iv.low : null,
        high: ok ? iv.high : null,
        n: iv?.n ?? vs?.ratio?.n ?? 0,
        verdict: vs?.verdict ?? 'n/a',
        verdictText: verdictWords(vs),
        noise: vs?.noise_rule?.verdict ?? null,
      });
    }
  }
  const values = [
    1 - stats.margin,
    1 + stats.margin,
    ...rows.flatMap((r) => (isNum(r.estimate) ? [r.low, r.high] : [])),
  ];
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  return {
    metric,
    targets,
    rows,
    confidence: stats.confidence,
    margin: stats.margin,
    min: lo,
    max: hi,
    log: lo > 0 && hi / lo > 4,
    any: rows.some((r) => isNum(r.estimate)),
  };
}

// A campaign whose targets ran with side services (docs/services.md): per cell and target the
// target's CPU per request, its services', their total (medians over the valid rounds) and the
// total's comparison with the baseline. The run of record has the services' figures only when
// some window ran with services: [] for every other campaign, so the page shows nothing.
export function serviceCpuRows(record) {
  const cells = record.cells ?? [];
  const any = cells.some((c) =>
    c.targets.some((t) => t.metrics && 'total_cpu_us_per_request' in t.metrics),
  );
  if (!any) return [];
  const rows = [];
  for (const cell of cells) {
    for (const t of cell.targets) {
      if (!t.windows) continue;
      const m = t.metrics ?? {};
      const median = (key) => (isNum(m[key]?.median) ? m[key].median : null);
      rows.push({
        cell,
        target: t.target,
        baseline: Boolean(t.baseline),
        target_us: median('cpu_us_per_request'),
        service_us: median('service_cpu_us_per_request'),
        total_us: median('total_cpu_us_per_request'),
        vs: t.baseline ? null : (m.total_cpu_us_per_request?.vs_baseline ?? null),
      });
    }
  }
  return rows;
}

// The side services of a window attempt as the window page lists them (the API's `services`):
// their CPU, per request, memory, whether the window started them, their reset and how they
// ended, in words.
export function serviceLines(doc) {
  return (doc?.services ?? []).map((s) => {
    const cpu = (s.cpu_user_s ?? 0) + (s.cpu_sys_s ?? 0);
    return {
      service: s.service,
      cpu: `${fmtNum(cpu)} s (${fmtNum(s.cpu_user_s)} user + ${fmtNum(s.cpu_sys_s)} system, ${s.cpu_accounting || '?'})`,
      per_request: isNum(s.cpu_us_per_request) ? `${fmtNum(s.cpu_us_per_request)} µs` : '–',
      rss: `${fmtKb(s.rss_mean_kb)} mean, ${fmtKb(s.rss_peak_kb)} peak`,
      started: s.started
        ? `started for this window${isNum(s.startup_ms) ? ` (ready in ${fmtMs(s.startup_ms)})` : ''}`
        : 'already running',
      reset: isNum(s.reset_ms) ? fmtMs(s.reset_ms) : 'none',
      alive: s.alive !== false,
      state: s.alive === false ? `died: ${s.exit || 'no reason stored'}` : 'alive',
    };
  });
}

// The probes of a window attempt (the API's `probes`): the readings around the interval and the
// rise, or why there is none (a failed reading, a counter that fell): never a 0 in its place.
export function probeLines(doc) {
  return (doc?.probes ?? []).map((p) => ({
    service: p.service,
    probe: p.probe,
    before: isNum(p.before) ? fmtNum(p.before) : '–',
    after: isNum(p.after) ? fmtNum(p.after) : '–',
    delta: isNum(p.delta) ? fmtNum(p.delta) : 'unavailable',
    available: isNum(p.delta),
    why: isNum(p.delta) ? '' : p.unavailable || 'no reason stored',
  }));
}

// The gate audit of the run of record (docs/gates.md, "Every gate audits itself"): one row per
// gate and host, with its refused and valid windows' distance from their cell's median, and the
// sentence that says whether the gate earned its refusals. Then the windows measured again.
export function gateAuditRows(record) {
  const pct = (v) => (isNum(v) ? `${v < 10 ? v.toFixed(1) : Math.round(v)}%` : '–');
  const shift = (f) =>
    isNum(f?.shift_low) && isNum(f?.shift_high)
      ? `${signed(f.shift_points)} [${signed(f.shift_low)}, ${signed(f.shift_high)}]`
      : '–';
  const rows = (record.gate_audit ?? []).map((a) => ({
    gate: a.gate,
    host: a.host || 'window',
    refused: `${a.refused} of ${a.windows}`,
    rps: `${pct(a.rps?.refused_off_pct)} vs ${pct(a.rps?.valid_off_pct)}`,
    rpsShift: shift(a.rps),
    cpu: `${pct(a.cpu_us_per_request?.refused_off_pct)} vs ${pct(a.cpu_us_per_request?.valid_off_pct)}`,
    cpuShift: shift(a.cpu_us_per_request),
    verdict: a.verdict,
    words: a.words,
  }));
  const again = record.remeasured ?? { windows: 0, by_gate: {} };
  const why = Object.entries(again.by_gate ?? {})
    .map(([gate, n]) => `${gate} ${n}`)
    .join(', ');
  const remeasured = again.windows
    ? `${again.windows} window${again.windows === 1 ? ' was' : 's were'} measured again after a gate refused them (${why}).`
    : '';
  return { rows, remeasured };
}

function signed(v) {
  return `${v >= 0 ? '+' : ''}${v.toFixed(1)}`;
}

// A host's facts as rows, with the host check's findings (docs/host.md) as rows of their own
// ("check: governor") whose value says "(warn)" when the check warns.
export function hostFacts(facts) {
  const out = {};
  for (const [k, v] of Object.entries(facts ?? {})) {
    if (k !== 'findings' || !Array.isArray(v)) {
      out[k] = v;
      continue;
    }
    for (const f of v) {
      if (!f || typeof f.name !== 'string') continue;
      const status = f.status === 'warn' ? ' (warn)' : '';
      out[`check: ${f.name}`] = `${f.value ?? ''}${status}`;
    }
  }
  return out;
}

// Every attempt that is not valid or carries gate reasons, newest first within its window.
export function problemAttempts(record) {
  const out = [];
  for (const w of record.windows ?? []) {
    for (const a of w.attempts ?? []) {
      if (a.verdict !== 'valid' || (a.reasons ?? []).length) out.push({ window: w, attempt: a });
    }
  }
  return out;
}

// Whether the campaign page should keep polling.
export function isLive(record, progress) {
  const state = record?.campaign?.state;
  return (
    state === 'queued' ||
    state === 'running' ||
    (progress?.running?.length ?? 0) > 0 ||
    (progress?.reruns_pending ?? 0) > 0
  );
}

// The latency histogram's buckets merged into `bins` bins of equal width on a log axis, for a
// bar chart whose bars touch: [{from_us, to_us, count}], empty bins kept so the axis is even.
export function logBins(buckets, bins = 48) {
  const usable = (buckets ?? []).filter((b) => isNum(b.count) && b.count > 0);
  if (usable.length === 0) return [];
  const lo = Math.max(1, Math.min(...usable.map((b) => b.from_us)));
  const hi = Math.max(lo + 1, ...usable.map((b) => b.to_us + 1));
  const n = Math.max(1, Math.min(bins, usable.length));
  const ratio = (hi / lo) ** (1 / n);
  const out = Array.from({ length: n }, (_, k) => ({
    from_us: lo * ratio ** k,
    to_us: lo * ratio ** (k + 1),
    count: 0,
  }));
  for (const b of usable) {
    const mid = Math.sqrt(Math.max(b.from_us, 1) * (b.to_us + 1));
    const k = Math.min(n - 1, Math.max(0, Math.floor(Math.log(mid / lo) / Math.log(ratio))));
    out[k].count += b.count;
  }
  return out;
}

// Per-second load samples as rates: each sample's requests over its period. A window shorter
// than its last second stores that second as a whole one (t_s = 1.0 for a 0.25 s window), so the
// period ends at the window's duration when it is known.
export function loadRates(samples, duration) {
  let previous = 0;
  return (samples ?? []).map((s) => {
    const end = isNum(duration) && duration > previous && s.t_s > duration ? duration : s.t_s;
    const period = end - previous;
    previous = end;
    return {
      t_s: end,
      rps: period > 0 && isNum(s.requests) ? s.requests / period : (s.rps ?? null),
      p99_us: s.p99_us ?? null,
    };
  });
}

// What a campaign's "valid" means, from the gate mode its windows were judged in
// (`gates_in_force` of the campaign list and of the run of record's campaign): only with the gates
// enforced is a valid window one the gates accepted. In warn mode the windows the gates would
// refuse count as valid too, and a campaign whose mode is not known (null, a stored file that no
// longer parses) cannot say; their windows are counted, not judged.
// {mode: 'enforce' | 'warn' | 'unknown', judged, words}
export function gateJudgement(gatesInForce) {
  if (gatesInForce === 'enforce') return { mode: 'enforce', judged: true, words: 'gates enforced' };
  if (gatesInForce === 'warn')
    return { mode: 'warn', judged: false, words: 'gates in warn mode: not judged' };
  return { mode: 'unknown', judged: false, words: 'gate mode unknown: not judged' };
}

// The valid windows in words: "24 valid" when the gates judged them, else "24 windows, gates in
// warn mode: not judged" (or "gate mode unknown: not judged"), so that such a campaign never
// reads as valid.
export function validCountText(valid, gatesInForce) {
  const j = gateJudgement(gatesInForce);
  const n = isNum(valid) ? valid : 0;
  const count = new Intl.NumberFormat('en-US').format(n);
  if (j.judged) return `${count} valid`;
  return `${count} window${n === 1 ? '' : 's'}, ${j.words}`;
}

// What a per-second chart of the load samples cannot show: the load generator counts requests
// per second (docs/api.md, `samples.load`), so a window of a second or less has one sample, a
// single dot that shows no course over time. The sentence saying so, or null with two samples
// or more (or none: the page says that none were stored).
export function perSecondNote(load, duration) {
  const n = (load ?? []).length;
  if (n !== 1) return null;
  const window = isNum(duration)
    ? `${fmtNum(duration)} s window`
    : 'A window of one second or less';
  return `${window}: the load generator records one sample per second, so this chart has a single point and shows no course over the window; see the key figures above.`;
}
