// What the campaign page shows, worked out from the run of record and the progress document
// (docs/api.md, docs/report.md): pure functions, no DOM, so each can be read and checked alone.

import {
  isNum,
  fmtRatio,
  fmtRange,
  levelLabel,
  cellLabel,
  shortCellLabel,
  windowName,
  fmtPct,
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

// Rounds planned: `rounds = N` of the spec's [matrix] (default 3), or the most a window shows.
export function plannedRounds(record) {
  const spec = record.spec ?? '';
  const matrix = /^\s*\[matrix\][^\n]*\n([\s\S]*?)(?=^\s*\[|(?![\s\S]))/m.exec(spec);
  const m = matrix && /^\s*rounds\s*=\s*(\d+)/m.exec(matrix[1]);
  const seen = Math.max(0, ...(record.windows ?? []).filter((w) => !w.noise).map((w) => w.round));
  return Math.max(m ? Number(m[1]) : 0, seen, 1);
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

// One line per target and cell that says who won and by how much, in plain words.
export function comparison(cell, t, baseline) {
  const vs = t.metrics?.rps?.vs_baseline;
  const ratio = vs?.ratio ?? {};
  const withRatio = vs?.rounds?.length ?? ratio.n ?? 0;
  const won = vs?.rounds_won ?? 0;
  const verdict = vs?.verdict ?? 'n/a';
  const figure = isNum(ratio.median)
    ? `${t.target} ${fmtRatio(ratio.median)} ${baseline} (${fmtRange(ratio.min, ratio.max)}), ${verdict}, won ${won}/${withRatio} round${withRatio === 1 ? '' : 's'}`
    : `${t.target} vs ${baseline}: not compared`;
  let plain;
  const pct = isNum(ratio.median) ? Math.abs(ratio.median - 1) * 100 : null;
  if (verdict === 'ahead')
    plain = `${t.target} served ${fmtPct(pct, pct < 10 ? 1 : 0)} more requests per second than ${baseline}.`;
  else if (verdict === 'behind')
    plain = `${t.target} served ${fmtPct(pct, pct < 10 ? 1 : 0)} fewer requests per second than ${baseline}.`;
  else if (verdict === 'close') plain = `Too close to call: ${vs?.reason ?? 'within the noise'}.`;
  else plain = `Not compared: ${vs?.reason ?? 'no figures'}.`;
  return {
    cell,
    target: t.target,
    verdict,
    figure,
    plain,
    text: `${shortCellLabel(cell)}: ${figure}`,
  };
}

// Every cell's comparisons, and a headline per target ("ahead of nginx in 3 of 4 cells").
export function summary(record) {
  const baseline = record.campaign?.baseline ?? null;
  const cells = (record.cells ?? []).map((cell) => ({
    cell,
    label: cellLabel(cell),
    lines: baseline
      ? cell.targets.filter((t) => !t.baseline).map((t) => comparison(cell, t, baseline))
      : [],
  }));
  const tally = new Map();
  for (const c of cells)
    for (const line of c.lines) {
      if (!tally.has(line.target))
        tally.set(line.target, { ahead: 0, behind: 0, close: 0, 'n/a': 0, cells: 0 });
      const t = tally.get(line.target);
      t[line.verdict] = (t[line.verdict] ?? 0) + 1;
      t.cells++;
    }
  const headlines = [...tally.entries()].map(([target, t]) => {
    const parts = [];
    if (t.ahead) parts.push(`ahead in ${t.ahead}`);
    if (t.behind) parts.push(`behind in ${t.behind}`);
    if (t.close) parts.push(`too close to call in ${t.close}`);
    if (t['n/a']) parts.push(`not comparable in ${t['n/a']}`);
    return {
      target,
      tally: t,
      text: `${target} vs ${baseline}: ${parts.join(', ')} of ${t.cells} cell${t.cells === 1 ? '' : 's'}.`,
    };
  });
  return { baseline, cells, headlines };
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
        text: `${where}No noise floor: the campaign measured no noise windows (no [noise] table), so a comparison is called close only when its round ratios straddle 1.`,
      };
    }
    if (!rps) {
      return {
        pair: nf.pair,
        fraction: null,
        text: `${where}No noise floor: ${nf.valid} of ${nf.windows} noise windows (${cell}) were valid; at least 2 are needed, so a comparison is called close only when its round ratios straddle 1.`,
      };
    }
    const v = rps.values ?? {};
    return {
      pair: nf.pair,
      fraction: rps.fraction,
      text: `${where}Noise floor ±${fmtPct(rps.fraction * 100)} of req/s: ${nf.valid} valid identical windows of ${cell} ranged ${Math.round(v.min ?? NaN).toLocaleString('en-US')}–${Math.round(v.max ?? NaN).toLocaleString('en-US')} req/s (median ${Math.round(v.median ?? NaN).toLocaleString('en-US')}). A difference smaller than that is not a difference.`,
    };
  });
}

// The noise floor (fraction) a cell's ratios are judged against: the verdict's own, else the pair's.
export function cellNoiseFloor(record, cell) {
  for (const t of cell.targets) {
    const f = t.metrics?.rps?.vs_baseline?.noise_floor;
    if (isNum(f)) return f;
  }
  const nf = (record.noise_floor ?? []).find((n) => (n.pair ?? '') === (cell.pair ?? ''));
  return isNum(nf?.metrics?.rps?.fraction) ? nf.metrics.rps.fraction : null;
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

// The req/s ratio to the baseline per cell and non-baseline target, with the noise band.
export function ratioSeries(record) {
  const cells = record.cells ?? [];
  const targets = uniq(
    cells.flatMap((c) => c.targets.filter((t) => !t.baseline).map((t) => t.target)),
  );
  return {
    labels: cells.map(shortCellLabel),
    bands: cells.map((c) => cellNoiseFloor(record, c)),
    datasets: targets.map((target) => {
      const vs = cells.map(
        (c) => c.targets.find((t) => t.target === target)?.metrics?.rps?.vs_baseline ?? null,
      );
      return {
        target,
        data: vs.map((v) => (isNum(v?.ratio?.median) ? v.ratio.median : null)),
        whiskers: vs.map((v) =>
          isNum(v?.ratio?.min) && isNum(v?.ratio?.max)
            ? { min: v.ratio.min, max: v.ratio.max }
            : null,
        ),
        verdicts: vs.map((v) => v?.verdict ?? 'n/a'),
      };
    }),
  };
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
