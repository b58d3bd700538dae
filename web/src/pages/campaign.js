// #/campaigns/NAME : the campaign's result in words first, then the noise floor, the heat map of
// its windows, charts of req/s, CPU per request and the ratio to the baseline, the figures, the
// windows that did not count and the hosts. Polls while the campaign is live and redraws only
// when progress.version changes.

import { h, replace, table, badge } from '../dom.js';
import { api, ApiError } from '../api.js';
import {
  fmtTime,
  fmtInt,
  fmtNum,
  fmtUs,
  fmtRatio,
  fmtRange,
  fmtPct,
  fmtKb,
  windowName,
  cellLabel,
  isNum,
} from '../format.js';
import {
  summary,
  noiseFloorLines,
  metricSeries,
  ratioSeries,
  problemAttempts,
  isLive,
} from '../model.js';
import { ChartSet, chartBox, colourOf } from '../charts.js';
import { errorBox, loading, Poller, section } from '../ui.js';
import { heatmap } from './heatmap.js';

const LIVE_MS = 1500;
const IDLE_MS = 10000;

function header(record) {
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

function progressLine(record, progress, live) {
  const p = progress ?? {};
  const pct = p.total ? Math.round((100 * p.done) / p.total) : 0;
  const parts = [
    `${fmtInt(p.done)}/${fmtInt(p.total)} windows stored (${pct}%)`,
    `${fmtInt(p.valid)} valid`,
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
      dataset: { live: String(live), version: p.version ?? '' },
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
      s.headlines.map((hl) => h('li', { dataset: { headline: hl.target } }, hl.text)),
    );
  return section(
    'summary',
    'Result',
    intro,
    anyTargets
      ? h(
          'p',
          { class: 'muted small' },
          `Each line: the median of the round-by-round req/s ratios to ${s.baseline}, their range, the verdict, and the rounds won. `,
          'Ahead/behind: outside the noise floor and every round agrees; close: within the noise, or the rounds disagree.',
        )
      : null,
    h(
      'div',
      { class: 'cells' },
      s.cells
        .filter((c) => c.lines.length)
        .map((c) =>
          h(
            'div',
            { class: 'cell-result', dataset: { cell: c.label } },
            h('h3', null, c.label),
            h(
              'ul',
              null,
              c.lines.map((line) =>
                h(
                  'li',
                  {
                    class: `verdict-line verdict-${line.verdict.replace('/', '')}`,
                    dataset: { target: line.target, verdict: line.verdict },
                  },
                  badge(line.verdict, line.verdict.replace('/', '')),
                  ' ',
                  h('span', { class: 'figure-text' }, line.figure),
                  h('br'),
                  h('span', { class: 'plain' }, line.plain),
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

function ratioConfig(record, series) {
  const order = record.targets ?? [];
  const data = [
    1,
    ...series.datasets.flatMap((d) => d.whiskers.flatMap((w) => (w ? [w.min, w.max] : []))),
    ...series.datasets.flatMap((d) => d.data.filter(isNum)),
  ];
  const bands = series.bands.filter(isNum).flatMap((f) => [1 - f, 1 + f]);
  // Ratios multiply: far from 1 (a target 4× faster or slower) a log axis keeps 1/2 and 2 alike.
  const log = Math.min(...data) > 0 && Math.max(...data) / Math.min(...data) > 4;
  const values = [...data, ...bands.filter((v) => !log || v > 0)];
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  const pad = Math.max(0.02, (hi - lo) * 0.1);
  return {
    type: 'bar',
    data: {
      labels: series.labels,
      datasets: series.datasets.map((d) => {
        const c = colourOf(Math.max(0, order.indexOf(d.target)));
        return {
          label: `${d.target} / ${record.campaign.baseline}`,
          data: d.data.map((v) => (isNum(v) ? [1, v] : null)),
          whiskers: d.whiskers,
          verdicts: d.verdicts,
          backgroundColor: `${c}bb`,
          borderColor: c,
          borderWidth: 1,
          maxBarThickness: 90,
        };
      }),
    },
    options: {
      scales: {
        y: log
          ? {
              type: 'logarithmic',
              min: lo / 1.15,
              max: hi * 1.15,
              title: {
                display: true,
                text: `req/s ratio to ${record.campaign.baseline} (log scale)`,
              },
              ticks: {
                callback: (v) => (/^(0\.)?[125]0*$|^0\.0*[125]$/.test(String(v)) ? `${v}×` : ''),
              },
            }
          : {
              min: Math.max(0, lo - pad),
              max: hi + pad,
              title: { display: true, text: `req/s ratio to ${record.campaign.baseline}` },
              ticks: { callback: (v) => `${Number(v).toFixed(2)}×` },
            },
        x: { grid: { display: false } },
      },
      plugins: {
        bands: { values: series.bands, around: 1 },
        tooltip: {
          callbacks: {
            label: (ctx) => {
              const w = ctx.dataset.whiskers[ctx.dataIndex];
              const v = ctx.raw ? ctx.raw[1] : null;
              return `${ctx.dataset.label}: ${fmtRatio(v)} (${w ? fmtRange(w.min, w.max) : '–'}), ${ctx.dataset.verdicts[ctx.dataIndex]}`;
            },
            afterLabel: (ctx) => {
              const f = series.bands[ctx.dataIndex];
              return isNum(f) ? `noise band 1 ± ${fmtPct(f * 100)}` : 'no noise floor';
            },
          },
        },
      },
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
  const ratio = chartBox(
    'chart-ratio',
    'Requests per second relative to the baseline, with min–max whiskers and the noise band',
  );
  const ratioSeriesData = ratioSeries(record);
  const anyRatio = ratioSeriesData.datasets.some((d) => d.data.some(isNum));
  const canRatio = record.campaign.baseline && anyRatio;
  const noRatio = !record.campaign.baseline
    ? 'No ratio chart: the campaign has no baseline.'
    : ratioSeriesData.datasets.length === 0
      ? 'No ratio chart: there is no other target to compare with the baseline.'
      : 'No ratio chart yet: no round has valid windows of both a target and the baseline.';
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
          canRatio
            ? h(
                'figure',
                { class: 'chart chart-wide' },
                h(
                  'figcaption',
                  null,
                  `Requests per second relative to ${record.campaign.baseline} (median of round ratios, min–max); shaded: the noise band 1 ± noise floor`,
                ),
                ratio.box,
              )
            : h('p', { class: 'muted chart-wide', id: 'no-ratio' }, noRatio),
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
      if (canRatio) charts.add(ratio.canvas, ratioConfig(record, ratioSeriesData));
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
              label: `vs ${record.campaign.baseline ?? 'baseline'}`,
              cls: 'num nowrap',
              get: (r) => {
                const vs = m(r, 'rps')?.vs_baseline;
                return r.t.baseline || !vs
                  ? '—'
                  : `${fmtRatio(vs.ratio?.median)} (${fmtRange(vs.ratio?.min, vs.ratio?.max)})`;
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
                      m(r, 'rps')?.vs_baseline?.verdict ?? 'n/a',
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

function hostsSection(record) {
  const hosts = record.hosts ?? [];
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

export function campaignPage(el, name) {
  const charts = new ChartSet();
  let version = null;
  let shown = false;
  document.title = `${name} · benchlab`;
  replace(
    el,
    h('p', { class: 'crumbs' }, h('a', { href: '#/' }, 'Campaigns'), ' / '),
    h('h1', null, name),
    loading('the campaign'),
  );
  const status = h('p', { class: 'poll-status', role: 'status', id: 'poll-status' });

  const render = (doc) => {
    const { record, progress } = doc;
    const live = isLive(record, progress);
    const scroll = window.scrollY;
    charts.destroy();
    const chartPart = chartsSection(record, charts);
    replace(
      el,
      header(record),
      progressLine(record, progress, live),
      status,
      summarySection(record),
      noiseSection(record),
      section(
        'windows',
        'Windows',
        h(
          'p',
          { class: 'muted small' },
          "One cell per window, its newest attempt's verdict; open one for its samples, reasons and re-run.",
        ),
        heatmap(record, progress),
      ),
      chartPart.el,
      figuresSection(record),
      problemsSection(record),
      hostsSection(record),
    );
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
    },
  };
}
