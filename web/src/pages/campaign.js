// #/campaigns/NAME : the campaign with a link to its place in its series, its result in words
// first (every comparison with its interval, every cell with its rounds), then the intervals
// drawn against the margin band, the noise floor, the heat map of its windows, charts of req/s
// and CPU per request, the figures, the windows that did not count and the hosts. Polls while the
// campaign is live and redraws only when progress.version changes.

import { h, replace, table, badge } from '../dom.js';
import { api, ApiError } from '../api.js';
import { profilesSection } from './profiles.js';
import {
  fmtTime,
  fmtInt,
  fmtNum,
  fmtUs,
  fmtRatio,
  fmtRange,
  fmtPct,
  fmtShare,
  fmtFixed,
  fmtKb,
  windowName,
  cellLabel,
  isNum,
} from '../format.js';
import {
  summary,
  noiseFloorLines,
  metricSeries,
  intervalSeries,
  intervalText,
  verdictWords,
  comparedMetrics,
  statsOf,
  METRICS,
  problemAttempts,
  gateAuditRows,
  hostFacts,
  serviceCpuRows,
  isLive,
  gateJudgement,
  validCountText,
} from '../model.js';
import { ChartSet, chartBox, colourOf, ink } from '../charts.js';
import { errorBox, loading, Poller, section } from '../ui.js';
import { heatmap } from './heatmap.js';

const LIVE_MS = 1500;
const IDLE_MS = 10000;

// "series nightly (campaign 3 of 10)", linking to the series page.
function seriesLine(series) {
  if (!series?.name) return null;
  return h(
    'span',
    { id: 'series-link' },
    'series ',
    h(
      'a',
      { href: `#/series/${encodeURIComponent(series.name)}`, dataset: { series: series.name } },
      series.name,
    ),
    ` (campaign ${series.position} of ${series.campaigns})`,
  );
}

function header(record, series) {
  const c = record.campaign;
  const name = c.name;
  return h(
    'div',
    { class: 'page-head' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/' }, 'Campaigns'), ' / '),
    h('h1', null, h('span', { id: 'campaign-name' }, name), ' ', badge(c.state)),
    h(
      'p',
      { class: 'meta' },
      c.baseline ? ['Baseline ', h('strong', null, c.baseline), ' · '] : 'No baseline · ',
      `${(record.targets ?? []).length} target${(record.targets ?? []).length === 1 ? '' : 's'} · from `,
      h('code', null, c.source || '–'),
      ` · submitted ${fmtTime(c.created_at)}`,
      c.finished_at ? ` · finished ${fmtTime(c.finished_at)}` : '',
      c.gates_mode ? ` · gates forced to ${c.gates_mode}` : '',
      series?.name ? [' · ', seriesLine(series)] : null,
    ),
    h(
      'p',
      { class: 'report-links', id: 'report-links' },
      'Report: ',
      h('a', { href: api.reportUrl(name, 'md'), dataset: { format: 'md' } }, 'Markdown'),
      ' · ',
      h(
        'a',
        { href: api.reportUrl(name, 'json'), dataset: { format: 'json' } },
        'JSON run of record',
      ),
      ' · ',
      h('a', { href: api.reportUrl(name, 'csv'), dataset: { format: 'csv' } }, 'CSV of attempts'),
    ),
    gatesWarning(c),
    c.error
      ? h(
          'div',
          { class: 'alert alert-error', role: 'alert', id: 'campaign-error' },
          h('strong', null, 'The campaign failed: '),
          c.error,
        )
      : null,
  );
}

// A campaign its gates did not judge, said before any figure: in warn mode the windows they would
// refuse count as valid; with the mode not known nothing can be said of them.
function gatesWarning(c) {
  const j = gateJudgement(c.gates_in_force);
  if (j.judged) return null;
  return h(
    'div',
    { class: 'alert alert-warn', role: 'note', id: 'gates-warning', dataset: { gates: j.mode } },
    h(
      'strong',
      null,
      j.mode === 'warn' ? 'Gates in warn mode: not judged. ' : 'Gate mode unknown: not judged. ',
    ),
    j.mode === 'warn'
      ? `The gates only warned${c.gates_mode ? ' (set by --gates)' : ''}: the windows they would refuse count as valid, so the figures below may include disturbed windows. "Valid" on this page means counted, not accepted by the gates (docs/gates.md).`
      : "This campaign's stored file no longer says which gate mode judged its windows, so they are counted, not judged valid.",
  );
}

function progressLine(record, progress, live) {
  const p = progress ?? {};
  const pct = p.total ? Math.round((100 * p.done) / p.total) : 0;
  const parts = [
    `${fmtInt(p.done)}/${fmtInt(p.total)} windows stored (${pct}%)`,
    validCountText(p.valid, record.campaign?.gates_in_force),
    `${fmtInt(p.invalid)} invalid`,
  ];
  if (p.failed) parts.push(`${fmtInt(p.failed)} failed`);
  if (p.skipped) parts.push(`${fmtInt(p.skipped)} skipped`);
  if (p.reruns_pending)
    parts.push(`${fmtInt(p.reruns_pending)} re-run${p.reruns_pending === 1 ? '' : 's'} pending`);
  return h(
    'div',
    {
      id: 'progress',
      class: ['progress', live ? 'is-live' : null],
      role: 'status',
      dataset: {
        live: String(live),
        version: p.version ?? '',
        gates: gateJudgement(record.campaign?.gates_in_force).mode,
      },
    },
    h(
      'div',
      null,
      live ? h('span', { class: 'live-dot', 'aria-hidden': 'true' }) : null,
      h('strong', null, live ? 'Live: ' : 'Progress: '),
      parts.join(' · '),
    ),
    (p.running ?? []).map((r) =>
      h(
        'div',
        { class: 'running-now', dataset: { running: windowName(r) } },
        'Measuring now: ',
        h('strong', null, windowName(r)),
        `, attempt ${r.attempt} on ${r.server_agent} → ${r.load_agent}`,
        r.started_at ? ` (since ${fmtTime(r.started_at).slice(11)})` : '',
      ),
    ),
  );
}

// The plan in one line: "Fixed plan: 3 rounds." or "Adaptive plan: 3–20 rounds per cell, ...".
function planLine(record, stats, metrics) {
  const conf = fmtShare(stats.confidence);
  const figures = metrics.map((m) => METRICS[m].label).join(' and ');
  const plan =
    stats.plan === 'adaptive'
      ? `Adaptive plan: ${stats.min_rounds}–${stats.max_rounds} rounds per cell, each cell measured until its ${figures} comparisons are decided; ${conf} confidence over the whole plan (each of its ${stats.looks} looks at ${fmtShare(stats.level_per_look)}).`
      : `Fixed plan${isNum(stats.max_rounds) ? `: ${stats.max_rounds} round${stats.max_rounds === 1 ? '' : 's'}` : ''}; ${conf} confidence.`;
  return h(
    'p',
    { id: 'plan', dataset: { plan: stats.plan } },
    `${plan} Margin ±${fmtShare(stats.margin)}: the smallest difference worth reporting.`,
  );
}

function summarySection(record) {
  const s = summary(record);
  const anyTargets = s.cells.some((c) => c.lines.length);
  let intro;
  if ((record.windows ?? []).length === 0)
    intro = h('p', null, 'Nothing measured yet: the result appears here as windows are stored.');
  else if (!s.baseline)
    intro = h(
      'p',
      null,
      'This campaign has no baseline, so its targets are not compared; read their figures below.',
    );
  else if (!anyTargets)
    intro = h(
      'p',
      null,
      `Only the baseline, ${s.baseline}, was measured: there is nothing to compare it with.`,
    );
  else
    intro = h(
      'ul',
      { class: 'headlines' },
      s.headlines.map((hl) =>
        h('li', { dataset: { headline: hl.target, metric: hl.metric } }, hl.text),
      ),
    );
  const margin = `±${fmtShare(s.stats.margin)}`;
  return section(
    'summary',
    'Result',
    record.stats ? planLine(record, s.stats, s.metrics) : null,
    intro,
    anyTargets
      ? h(
          'p',
          { class: 'muted small' },
          `Each line: the geometric mean of the round-by-round ratios to ${s.baseline} with its ${fmtShare(s.stats.confidence)} confidence interval (CI), and the verdict. `,
          `Ahead/behind: the whole interval lies beyond the margin ${margin}; close: the whole interval lies inside it; inconclusive: neither, with about how many rounds would decide it; n/a: fewer than 2 rounds to compare. `,
          "The noise-floor rule's verdict follows as context; it does not decide.",
        )
      : null,
    h(
      'div',
      { class: 'cells' },
      s.cells
        .filter((c) => c.lines.length || c.rounds)
        .map((c) =>
          h(
            'div',
            { class: 'cell-result', dataset: { cell: c.label } },
            h('h3', null, c.label),
            c.rounds
              ? h(
                  'p',
                  { class: 'cell-rounds muted small', dataset: { stopped: c.rounds.stopped } },
                  c.rounds.text,
                )
              : null,
            h(
              'ul',
              null,
              c.lines.map((line) =>
                h(
                  'li',
                  {
                    class: `verdict-line verdict-${line.verdict.replace('/', '')}`,
                    dataset: { target: line.target, metric: line.metric, verdict: line.verdict },
                  },
                  badge(line.verdictText, line.verdict.replace('/', '')),
                  ' ',
                  h('span', { class: 'figure-text' }, line.figure),
                  h('br'),
                  h('span', { class: 'plain' }, line.plain),
                  line.noise || line.won
                    ? [
                        h('br'),
                        h(
                          'span',
                          { class: 'context muted small' },
                          [line.won, line.noise].filter(Boolean).join('; '),
                        ),
                      ]
                    : null,
                ),
              ),
            ),
          ),
        ),
    ),
  );
}

function noiseSection(record) {
  return section(
    'noise-floor',
    'Noise floor',
    noiseFloorLines(record).map((l) =>
      h('p', { dataset: { pair: l.pair, fraction: l.fraction ?? '' } }, l.text),
    ),
  );
}

function barConfig(record, series, unit, digits) {
  const order = record.targets ?? [];
  const maxWhisker = Math.max(
    0,
    ...series.datasets.flatMap((d) => d.whiskers.map((w) => w?.max ?? 0)),
    ...series.datasets.flatMap((d) => d.data.map((v) => v ?? 0)),
  );
  return {
    type: 'bar',
    data: {
      labels: series.labels,
      datasets: series.datasets.map((d) => {
        const c = colourOf(Math.max(0, order.indexOf(d.target)));
        return {
          label: d.target,
          data: d.data,
          whiskers: d.whiskers,
          backgroundColor: `${c}bb`,
          borderColor: c,
          borderWidth: 1,
          maxBarThickness: 90,
        };
      }),
    },
    options: {
      scales: {
        y: {
          beginAtZero: true,
          suggestedMax: maxWhisker * 1.05,
          title: { display: true, text: unit },
        },
        x: { grid: { display: false } },
      },
      plugins: {
        tooltip: {
          callbacks: {
            label: (ctx) =>
              `${ctx.dataset.label}: ${fmtNum(ctx.parsed.y, digits)} ${unit} (median)`,
            afterLabel: (ctx) => {
              const w = ctx.dataset.whiskers[ctx.dataIndex];
              return w ? `min–max ${fmtNum(w.min, digits)}–${fmtNum(w.max, digits)}` : '';
            },
          },
        },
      },
    },
  };
}

// A shape per verdict, so that the chart does not say it by colour alone (the row's label and
// the table below say it in words): ▲ ahead, ▼ behind, ● close, ◆ inconclusive.
const VERDICT_POINT = {
  ahead: { style: 'triangle', rotation: 0 },
  behind: { style: 'triangle', rotation: 180 },
  close: { style: 'circle', rotation: 0 },
  inconclusive: { style: 'rectRot', rotation: 0 },
};
const pointOf = (verdict) => VERDICT_POINT[verdict] ?? VERDICT_POINT.inconclusive;

// A forest plot: a row per cell (and target), the interval as a thin floating bar [low, high]
// on the ratio axis, the estimate as a point shaped by the verdict, over the margin band
// 1 ± margin and a dashed line at 1.
function intervalConfig(record, series) {
  const order = record.targets ?? [];
  const conf = fmtShare(series.confidence);
  const metric = METRICS[series.metric];
  const axis = `${metric.label} ratio to ${record.campaign.baseline}`;
  const pad = series.log ? 1.08 : Math.max(0.01, (series.max - series.min) * 0.08);
  const datasets = series.targets.flatMap((target) => {
    const c = colourOf(Math.max(0, order.indexOf(target)));
    const mine = (r) => r.target === target && isNum(r.estimate);
    return [
      {
        type: 'bar',
        label: series.targets.length > 1 ? target : `${conf} CI`,
        data: series.rows.map((r) => (mine(r) ? [r.low, r.high] : null)),
        backgroundColor: c,
        borderColor: c,
        barThickness: 6,
        grouped: false,
        order: 2,
      },
      {
        type: 'line',
        label: `${target} estimate`,
        data: series.rows.map((r) => (mine(r) ? r.estimate : null)),
        showLine: false,
        pointStyle: series.rows.map((r) => pointOf(r.verdict).style),
        rotation: series.rows.map((r) => pointOf(r.verdict).rotation),
        pointRadius: 6,
        pointHoverRadius: 7,
        backgroundColor: c,
        borderColor: ink(),
        borderWidth: 1,
        order: 1,
      },
    ];
  });
  return {
    type: 'bar',
    data: { labels: series.rows.map((r) => `${r.label}: ${r.verdictText}`), datasets },
    options: {
      indexAxis: 'y',
      layout: { padding: { top: 14 } },
      scales: {
        x: series.log
          ? {
              type: 'logarithmic',
              min: series.min / pad,
              max: series.max * pad,
              title: { display: true, text: `${axis} (log scale)` },
              ticks: {
                callback: (v) => (/^(0\.)?[125]0*$|^0\.0*[125]$/.test(String(v)) ? `${v}×` : ''),
              },
            }
          : {
              min: Math.max(0, series.min - pad),
              max: series.max + pad,
              title: { display: true, text: axis },
              ticks: { callback: (v) => `${Number(v).toFixed(2)}×` },
            },
        y: { grid: { display: false } },
      },
      plugins: {
        margin: {
          low: 1 - series.margin,
          high: 1 + series.margin,
          at: 1,
          label: `margin ±${fmtShare(series.margin)}`,
        },
        legend: {
          display: series.targets.length > 1,
          labels: { filter: (item, data) => data.datasets[item.datasetIndex].type === 'bar' },
        },
        tooltip: {
          filter: (item) => item.dataset.type === 'bar',
          callbacks: {
            label: (ctx) => {
              const r = series.rows[ctx.dataIndex];
              return `${r.target}: ${fmtRatio(r.estimate)} (${conf} CI ${fmtRange(r.low, r.high)}, ${r.n} rounds), ${r.verdictText}`;
            },
            afterLabel: (ctx) => {
              const r = series.rows[ctx.dataIndex];
              return r.noise ? `noise-floor rule: ${r.noise}` : '';
            },
          },
        },
      },
    },
  };
}

// The chart's numbers as a table: its text alternative.
function intervalTable(record, series) {
  const conf = fmtShare(series.confidence);
  return table(
    [
      { label: 'Cell', get: (r) => cellLabel(r.cell) },
      { label: 'Target', get: (r) => r.target },
      {
        label: `ratio to ${record.campaign.baseline}`,
        cls: 'num',
        get: (r) => (isNum(r.estimate) ? `${fmtFixed(r.estimate, 3)}×` : '–'),
      },
      { label: `${conf} CI low`, cls: 'num', get: (r) => fmtFixed(r.low, 3) },
      { label: `${conf} CI high`, cls: 'num', get: (r) => fmtFixed(r.high, 3) },
      { label: 'rounds', cls: 'num', get: (r) => String(r.n) },
      { label: 'verdict', get: (r) => badge(r.verdictText, r.verdict.replace('/', '')) },
      { label: 'noise-floor rule', cls: 'muted', get: (r) => r.noise ?? '–' },
    ],
    series.rows,
    {
      id: `interval-table-${series.metric}`,
      caption: `${METRICS[series.metric].label}: the chart's intervals`,
      rowAttrs: (r) => ({
        dataset: { cell: cellLabel(r.cell), target: r.target, verdict: r.verdict },
      }),
    },
  );
}

// One forest plot per compared figure, each with its table.
function intervalsSection(record, charts) {
  const baseline = record.campaign.baseline;
  const all = comparedMetrics(record).map((m) => intervalSeries(record, m));
  const shown = all.filter((x) => x.any);
  const stats = statsOf(record);
  const boxes = shown.map((series) => ({
    series,
    chart: chartBox(
      `chart-ratio-${series.metric}`,
      `${METRICS[series.metric].label} relative to ${baseline}: each interval against the margin band; the table below has the same numbers`,
      Math.max(140, 60 + 30 * series.rows.length),
    ),
  }));
  const none = !baseline
    ? 'No intervals: the campaign has no baseline.'
    : all.every((x) => x.rows.length === 0)
      ? 'No intervals: there is no other target to compare with the baseline.'
      : 'No intervals yet: an interval needs at least 2 rounds with valid windows of both a target and the baseline.';
  const sec = section(
    'intervals',
    'Intervals against the margin',
    shown.length
      ? [
          h(
            'p',
            { class: 'muted small' },
            `Each row: a target's ratio to ${baseline} (the point) and its ${fmtShare(stats.confidence)} confidence interval (the bar). `,
            `Shaded: the margin 1 ± ${fmtShare(stats.margin)}; dashed: a ratio of 1. `,
            'Points: ▲ ahead, ▼ behind, ● close, ◆ inconclusive.',
          ),
          boxes.map(({ series, chart }) =>
            h(
              'figure',
              { class: 'chart', dataset: { metric: series.metric } },
              h(
                'figcaption',
                null,
                `${METRICS[series.metric].label} relative to ${baseline} (${METRICS[series.metric].higher ? 'higher' : 'lower'} is better)`,
              ),
              chart.box,
              intervalTable(record, series),
            ),
          ),
        ]
      : h('p', { class: 'muted', id: 'no-ratio' }, none),
  );
  return {
    el: sec,
    draw: () => {
      for (const { series, chart } of boxes)
        charts.add(chart.canvas, intervalConfig(record, series));
    },
  };
}

function chartsSection(record, charts) {
  const rpsSeries = metricSeries(record, 'rps');
  const cpuSeries = metricSeries(record, 'cpu_us_per_request');
  const hasData = (series) => series.datasets.some((d) => d.data.some(isNum));
  const hasCells = (record.cells ?? []).length > 0 && hasData(rpsSeries);
  const rps = chartBox(
    'chart-rps',
    'Median requests per second per target and cell, with min–max whiskers',
  );
  const cpu = chartBox(
    'chart-cpu',
    'Median server CPU microseconds per request per target and cell, with min–max whiskers',
  );
  const sec = section(
    'charts',
    'Charts',
    h(
      'p',
      { class: 'muted small' },
      "Bars: medians over each target's valid rounds; whiskers: their minimum and maximum. Only valid windows count.",
    ),
    hasCells
      ? h(
          'div',
          { class: 'chart-grid' },
          h(
            'figure',
            { class: 'chart' },
            h('figcaption', null, 'Requests per second (median, min–max)'),
            rps.box,
          ),
          h(
            'figure',
            { class: 'chart' },
            h('figcaption', null, 'Server CPU µs per request (median, min–max; lower is better)'),
            cpu.box,
          ),
        )
      : h(
          'p',
          { class: 'muted', id: 'no-charts' },
          'Nothing to chart yet: no cell has a valid window. The heat map and the list below say why.',
        ),
  );
  return {
    el: sec,
    draw: () => {
      if (!hasCells) return;
      charts.add(rps.canvas, barConfig(record, rpsSeries, 'req/s', 3));
      charts.add(cpu.canvas, barConfig(record, cpuSeries, 'µs/request', 3));
    },
  };
}

function figuresSection(record) {
  const rows = (record.cells ?? []).flatMap((cell) => cell.targets.map((t) => ({ cell, t })));
  const m = (r, k) => r.t.metrics?.[k];
  return section(
    'figures',
    'Figures per cell',
    rows.length === 0
      ? h('p', { class: 'muted' }, 'No figures yet.')
      : table(
          [
            { label: 'Cell', get: (r) => cellLabel(r.cell) },
            {
              label: 'Target',
              get: (r) => [
                r.t.target,
                r.t.baseline ? h('span', { class: 'muted' }, ' (baseline)') : null,
              ],
            },
            { label: 'req/s', cls: 'num', get: (r) => fmtInt(m(r, 'rps')?.median) },
            {
              label: 'spread',
              cls: 'num',
              title: '(max − min) / median',
              get: (r) => ((m(r, 'rps')?.n ?? 0) > 1 ? fmtPct(m(r, 'rps')?.spread_pct) : '–'),
            },
            { label: 'p50', cls: 'num', get: (r) => fmtUs(m(r, 'p50_us')?.median) },
            { label: 'p99', cls: 'num', get: (r) => fmtUs(m(r, 'p99_us')?.median) },
            {
              label: 'CPU µs/req',
              cls: 'num',
              get: (r) => fmtNum(m(r, 'cpu_us_per_request')?.median),
            },
            {
              label: 'req/CPU-s',
              cls: 'num',
              get: (r) => fmtInt(m(r, 'requests_per_cpu_s')?.median),
            },
            {
              label: `req/s vs ${record.campaign.baseline ?? 'baseline'}`,
              cls: 'num nowrap',
              get: (r) => {
                const vs = m(r, 'rps')?.vs_baseline;
                return r.t.baseline || !vs ? '—' : intervalText(vs, statsOf(record));
              },
            },
            {
              label: 'won',
              cls: 'num',
              get: (r) => {
                const vs = m(r, 'rps')?.vs_baseline;
                return r.t.baseline || !vs ? '—' : `${vs.rounds_won}/${vs.rounds?.length ?? 0}`;
              },
            },
            {
              label: 'verdict',
              get: (r) =>
                r.t.baseline
                  ? badge('baseline')
                  : badge(
                      verdictWords(m(r, 'rps')?.vs_baseline),
                      (m(r, 'rps')?.vs_baseline?.verdict ?? 'na').replace('/', ''),
                    ),
            },
            { label: 'valid', cls: 'num', get: (r) => `${r.t.valid}/${r.t.windows}` },
          ],
          rows,
          {
            id: 'figures-table',
            rowAttrs: (r) => ({ dataset: { cell: cellLabel(r.cell), target: r.t.target } }),
          },
        ),
  );
}

// Only for a campaign whose targets ran with side services: what a request cost the target, its
// services and both (the cost of a request, database included), and the total against the
// baseline's.
function serviceCpuSection(record) {
  const rows = serviceCpuRows(record);
  if (rows.length === 0) return null;
  const baseline = record.campaign.baseline ?? 'baseline';
  return section(
    'service-cpu',
    'CPU per request with side services',
    h(
      'p',
      { class: 'muted small' },
      "The target's CPU per request, its side services' (each in a cgroup of its own, measured apart) and their total: the cost of a request, database included. ",
      "Medians over each target's valid rounds, so the total's median need not be the sum of the other two. ",
      `A target without services has neither (–), and its total is not compared.`,
    ),
    table(
      [
        { label: 'Cell', get: (r) => cellLabel(r.cell) },
        {
          label: 'Target',
          get: (r) => [r.target, r.baseline ? h('span', { class: 'muted' }, ' (baseline)') : null],
        },
        { label: 'target CPU µs/req', cls: 'num', get: (r) => fmtNum(r.target_us) },
        { label: 'services CPU µs/req', cls: 'num', get: (r) => fmtNum(r.service_us) },
        { label: 'total CPU µs/req', cls: 'num', get: (r) => fmtNum(r.total_us) },
        {
          label: `total vs ${baseline}`,
          cls: 'num nowrap',
          get: (r) => (r.baseline || !r.vs ? '—' : intervalText(r.vs, statsOf(record))),
        },
        {
          label: 'verdict',
          get: (r) =>
            r.baseline
              ? badge('baseline')
              : badge(verdictWords(r.vs), (r.vs?.verdict ?? 'na').replace('/', '')),
        },
      ],
      rows,
      {
        id: 'service-cpu-table',
        rowAttrs: (r) => ({ dataset: { cell: cellLabel(r.cell), target: r.target } }),
      },
    ),
  );
}

function outcome(w, a) {
  if (a.newest) return a.verdict === 'valid' ? 'counts, with warnings' : 'newest: left out';
  const newest = w.attempts[w.attempts.length - 1];
  return `replaced by attempt ${newest.attempt} (${newest.verdict})`;
}

function problemsSection(record) {
  const list = problemAttempts(record);
  const notValid = list.filter((p) => p.attempt.verdict !== 'valid');
  const none =
    (record.windows ?? []).length === 0
      ? 'No window stored yet.'
      : 'Every window is valid and no gate raised a warning.';
  return section(
    'problems',
    list.length === notValid.length
      ? 'Windows that did not count'
      : 'Windows that did not count, and gate warnings',
    list.length === 0
      ? h('p', null, none)
      : [
          h(
            'p',
            { class: 'muted small' },
            `${notValid.length} attempt${notValid.length === 1 ? ' was' : 's were'} not valid; `,
            `${list.length - notValid.length} valid attempt${list.length - notValid.length === 1 ? '' : 's'} carry gate warnings. `,
            'Open a window to see its samples and to re-run it; only the newest attempt of a window counts.',
          ),
          table(
            [
              {
                label: 'id',
                get: (p) => h('a', { href: `#/windows/${p.attempt.id}` }, `#${p.attempt.id}`),
              },
              { label: 'window', get: (p) => windowName(p.window) },
              { label: 'attempt', cls: 'num', get: (p) => String(p.attempt.attempt) },
              { label: 'verdict', get: (p) => badge(p.attempt.verdict) },
              {
                label: 'reasons',
                cls: 'reasons',
                get: (p) =>
                  h(
                    'ul',
                    { class: 'reason-list' },
                    (p.attempt.reasons ?? []).map((r) => h('li', null, r)),
                  ),
              },
              { label: 'outcome', get: (p) => outcome(p.window, p.attempt) },
            ],
            list,
            {
              id: 'problems-table',
              rowAttrs: (p) => ({
                dataset: { windowId: p.attempt.id, verdict: p.attempt.verdict },
              }),
            },
          ),
        ],
  );
}

function gateAuditSection(record) {
  const { rows, remeasured } = gateAuditRows(record);
  if (rows.length === 0 && !remeasured) return null;
  return section(
    'gate-audit',
    'Gate audit',
    h(
      'p',
      { class: 'muted small' },
      "Each gate's refused windows against the valid ones: how far their figures lay from their cell's median of valid windows, the shift with its 95% interval, and whether the gate earned its refusals or refused noise.",
    ),
    rows.length
      ? table(
          [
            { label: 'gate', get: (r) => h('code', null, r.gate) },
            { label: 'host', get: (r) => r.host },
            { label: 'refused', cls: 'num', get: (r) => r.refused },
            { label: 'req/s off', cls: 'num', get: (r) => r.rps },
            { label: 'shift', cls: 'num', get: (r) => r.rpsShift },
            { label: 'CPU/request off', cls: 'num', get: (r) => r.cpu },
            { label: 'shift', cls: 'num', get: (r) => r.cpuShift },
            { label: 'verdict', get: (r) => badge(r.verdict) },
          ],
          rows,
          { id: 'gate-audit-table' },
        )
      : null,
    ...rows.map((r) => h('p', { class: 'gate-audit-words' }, r.words)),
    remeasured ? h('p', { id: 'gate-audit-remeasured' }, remeasured) : null,
  );
}

function hostsSection(record) {
  const hosts = (record.hosts ?? []).map((x) => ({ ...x, facts: hostFacts(x.facts) }));
  if (hosts.length === 0) return null;
  const facts = [...new Set(hosts.flatMap((x) => Object.keys(x.facts ?? {})))].sort();
  const show = (v, key) => {
    if (v === null || v === undefined) return '–';
    if (key === 'memory_kb' && isNum(v)) return fmtKb(v);
    return typeof v === 'object' ? JSON.stringify(v) : String(v);
  };
  return section(
    'hosts',
    'Hosts',
    h('p', { class: 'muted small' }, 'As each agent reported its machine.'),
    table(
      [
        { label: 'fact', get: (f) => h('code', null, f) },
        ...hosts.map((x) => ({
          label: `${x.role}: ${x.agent}`,
          get: (f) => show(x.facts?.[f], f),
        })),
      ],
      facts,
      { id: 'hosts-table' },
    ),
  );
}

// `query`: the hash's query (#/campaigns/NAME?target=T&compare=B&cell=S/L&window=ID), which
// presets the Profiles section's choices.
export function campaignPage(el, name, query = {}) {
  const charts = new ChartSet();
  let version = null;
  let shown = false;
  let profiles = null; // built on the first render, kept across redraws
  document.title = `${name} · benchlab`;
  replace(
    el,
    h('p', { class: 'crumbs' }, h('a', { href: '#/' }, 'Campaigns'), ' / '),
    h('h1', null, name),
    loading('the campaign'),
  );
  const status = h('p', { class: 'poll-status', role: 'status', id: 'poll-status' });

  const render = (doc) => {
    const { record, progress, series } = doc;
    const live = isLive(record, progress);
    const scroll = window.scrollY;
    charts.destroy();
    const chartPart = chartsSection(record, charts);
    const intervalPart = intervalsSection(record, charts);
    if (!profiles) profiles = profilesSection(name, record, query);
    else profiles.update(record);
    replace(
      el,
      header(record, series),
      progressLine(record, progress, live),
      status,
      summarySection(record),
      intervalPart.el,
      noiseSection(record),
      section(
        'windows',
        'Windows',
        h(
          'p',
          { class: 'muted small' },
          "One cell per window, its newest attempt's verdict; open one for its samples, reasons and re-run.",
          gateJudgement(record.campaign?.gates_in_force).judged
            ? ''
            : ` ${gateJudgement(record.campaign?.gates_in_force).mode === 'warn' ? 'Gates in warn mode' : 'Gate mode unknown'}: a valid cell is a window counted, not one the gates accepted.`,
        ),
        heatmap(record, progress),
      ),
      chartPart.el,
      profiles.el,
      figuresSection(record),
      serviceCpuSection(record),
      gateAuditSection(record),
      problemsSection(record),
      hostsSection(record),
    );
    intervalPart.draw();
    chartPart.draw();
    el.dataset.version = progress?.version ?? '';
    if (shown) window.scrollTo(0, scroll);
    shown = true;
    return live;
  };

  const poller = new Poller(
    LIVE_MS,
    async () => {
      const doc = await api.campaign(name);
      status.textContent = '';
      let live = isLive(doc.record, doc.progress);
      if (doc.progress?.version !== version) {
        live = render(doc);
        version = doc.progress?.version;
      }
      poller.ms = live ? LIVE_MS : IDLE_MS;
    },
    (err) => {
      if (!shown) {
        replace(
          el,
          h('p', { class: 'crumbs' }, h('a', { href: '#/' }, 'Campaigns'), ' / '),
          h('h1', null, name),
          errorBox(
            err,
            err instanceof ApiError && err.status === 404
              ? 'No such campaign'
              : 'Cannot load the campaign',
          ),
        );
        if (err instanceof ApiError && err.status === 404) poller.stop();
      } else {
        status.textContent = `Updates paused: ${err.message}; retrying…`;
      }
    },
  ).start(true);
  return {
    destroy: () => {
      poller.stop();
      charts.destroy();
      profiles?.destroy();
    },
  };
}
