// #/series/NAME[?figure=rps|cpu|p99] : a campaign series (docs/history.md). Per cell (pair,
// scenario, load level) a chart with each target's estimate of the figure per campaign as a line,
// its interval as whiskers, campaigns oldest first, the y axis from 0 (or fitted to the data, said
// so), a line cut wherever the gate mode changes and the points of campaigns not judged (gates in
// warn mode) drawn apart, each change point marked between its campaigns in the style of its
// status; then every change in a table with its status. Polls slowly (a new
// campaign may join the series, a change's status may move) and redraws only when the document
// changed. A change confirmed by a profiled re-measurement links to that campaign's differential
// flame graph, the new build against the old (docs/profiles.md).

import { h, replace, table, badge } from '../dom.js';
import { api, ApiError } from '../api.js';
import { fmtNum, fmtTime, fmtShare, isNum } from '../format.js';
import {
  SERIES_FIGURES,
  seriesFigure,
  lineLabel,
  alignedPoints,
  seriesCells,
  cellDatasets,
  changesOfCell,
  changeMarker,
  changeSize,
  remeasuredText,
} from '../series_model.js';
import { gateJudgement } from '../model.js';
import { profileHash } from '../profile_model.js';
import { ChartSet, chartBox, colourOf, legendBelow } from '../charts.js';
import { errorBox, loading, Poller, section } from '../ui.js';

const POLL_MS = 10000;

const campaignLink = (name) =>
  h(
    'a',
    { href: `#/campaigns/${encodeURIComponent(name)}`, dataset: { campaignLink: name } },
    name,
  );

function crumbs() {
  return h('p', { class: 'crumbs' }, h('a', { href: '#/' }, 'Campaigns'), ' / series / ');
}

function figureSelector(name, figure) {
  const select = h(
    'select',
    {
      id: 'figure-select',
      onchange: (e) => {
        window.location.hash = `#/series/${encodeURIComponent(name)}?figure=${e.target.value}`;
      },
    },
    SERIES_FIGURES.map((f) =>
      h('option', { value: f.query, selected: f.query === figure.query }, f.label),
    ),
  );
  return h(
    'p',
    { class: 'figure-selector' },
    h('label', { for: 'figure-select' }, 'Figure: '),
    select,
  );
}

// How each gate mode's points and lines are drawn, so that a mode is told by shape and dash, not
// colour alone: enforced, filled circles on a solid line; warn mode, hollow triangles on a dashed
// line; mode unknown, hollow diamonds on a dotted line.
const MODE_STYLE = {
  enforce: { pointStyle: 'circle', dash: [], hollow: false, radius: 4 },
  warn: { pointStyle: 'triangle', dash: [6, 4], hollow: true, radius: 6 },
  unknown: { pointStyle: 'rectRot', dash: [2, 3], hollow: true, radius: 6 },
};

// One cell's chart: each target a line per run of campaigns of one gate mode (cellDatasets), the
// intervals as whiskers, the change points as vertical markers. The y axis starts at 0 unless
// `zoom`, when it fits the data and its title says that it does not start at 0.
function cellConfig(doc, datasets, figure, markers, zoom) {
  const values = datasets
    .flatMap((d) => d.points.flatMap((p) => (p ? [p.estimate, p.low, p.high] : [])))
    .filter(isNum);
  const low = Math.min(...values);
  const high = Math.max(...values);
  const pad = values.length ? Math.max((high - low) * 0.15, Math.abs(high) * 0.02) : 1;
  return {
    type: 'line',
    data: {
      labels: (doc.campaigns ?? []).map((x) => x.name),
      datasets: datasets.map((d) => {
        const style = MODE_STYLE[d.mode] ?? MODE_STYLE.unknown;
        const c = colourOf(d.colour);
        return {
          label: d.label,
          legendEntry: d.legend,
          points: d.points,
          data: d.data,
          whiskers: d.whiskers,
          borderColor: c,
          backgroundColor: style.hollow ? '#ffffff' : c,
          borderDash: style.dash,
          borderWidth: 2,
          pointStyle: style.pointStyle,
          pointRadius: style.radius,
          pointBorderWidth: 2,
          // Within a run of one gate mode a campaign without a point is spanned; the runs are
          // datasets of their own, so no line crosses from one mode to another.
          spanGaps: true,
        };
      }),
    },
    options: {
      scales: {
        y: zoom
          ? {
              // A figure is never below 0: the axis does not go there for an interval's padding.
              suggestedMin: values.length
                ? Math.max(low >= 0 ? 0 : -Infinity, low - pad)
                : undefined,
              suggestedMax: values.length ? high + pad : undefined,
              title: { display: true, text: `${figure.unit} (axis does not start at 0)` },
            }
          : {
              min: 0,
              suggestedMax: values.length ? high + pad : undefined,
              title: { display: true, text: figure.unit },
            },
        x: { grid: { display: false }, ticks: { autoSkip: true, maxRotation: 45 } },
      },
      layout: { padding: { top: 40 } }, // room for the change points' labels
      plugins: {
        legend: legendBelow(),
        markers: { list: markers },
        tooltip: {
          callbacks: {
            label: (ctx) =>
              `${ctx.dataset.label}: ${fmtNum(ctx.parsed.y)} ${figure.unit} (estimate)`,
            afterLabel: (ctx) => {
              const p = ctx.dataset.points[ctx.dataIndex];
              if (!p) return '';
              const interval =
                isNum(p.low) && isNum(p.high)
                  ? `${fmtShare(doc.confidence)} interval ${fmtNum(p.low)}–${fmtNum(p.high)}`
                  : 'no interval (one round)';
              return `${interval}; median ${fmtNum(p.median)}; ${p.n} round${p.n === 1 ? '' : 's'}${p.version ? `; ${p.version}` : ''}`;
            },
          },
        },
      },
    },
  };
}

// The points of a cell as a table, for reading the figures (and for screen readers).
function pointsTable(doc, cell, figure, id) {
  const campaigns = doc.campaigns ?? [];
  const rows = cell.lines.flatMap((line) =>
    alignedPoints(doc, line)
      .map((p, i) => ({ c: campaigns[i], p, line }))
      .filter((r) => r.p),
  );
  return h(
    'details',
    { class: 'series-points' },
    h('summary', null, `The figures (${rows.length} point${rows.length === 1 ? '' : 's'})`),
    table(
      [
        { label: 'target', get: (r) => r.line.target },
        { label: 'campaign', get: (r) => campaignLink(r.c.name) },
        { label: 'gates', get: (r) => gateJudgement(r.c.gates_in_force).words },
        { label: `estimate (${figure.unit})`, cls: 'num', get: (r) => fmtNum(r.p.estimate) },
        {
          label: `${fmtShare(doc.confidence)} interval`,
          cls: 'num',
          get: (r) =>
            isNum(r.p.low) && isNum(r.p.high) ? `${fmtNum(r.p.low)}–${fmtNum(r.p.high)}` : '–',
        },
        { label: 'median', cls: 'num', get: (r) => fmtNum(r.p.median) },
        { label: 'rounds', cls: 'num', get: (r) => String(r.p.n) },
        { label: 'version', get: (r) => r.p.version ?? '–' },
      ],
      rows,
      {
        id,
        rowAttrs: (r) => ({
          dataset: {
            campaign: r.c.name,
            target: r.line.target,
            gates: gateJudgement(r.c.gates_in_force).mode,
          },
        }),
      },
    ),
  );
}

function statusBadge(status) {
  return badge(status ?? 'no status');
}

function cellsSection(doc, figure, charts, zoom, setZoom) {
  const cells = seriesCells(doc);
  const draws = [];
  const campaigns = doc.campaigns ?? [];
  const anyUnjudged = campaigns.some((c) => !gateJudgement(c.gates_in_force).judged);
  const figures = cells.map((cell, i) => {
    const changes = changesOfCell(doc, cell);
    const several = cell.lines.length > 1;
    const markers = changes.map((c) => changeMarker(doc, c, several)).filter(Boolean);
    const datasets = cellDatasets(doc, cell);
    const said = changes.length
      ? `; ${changes.length} change point${changes.length === 1 ? '' : 's'}: ${changes
          .map(
            (c) =>
              `${several ? `${c.target}: ` : ''}${c.direction} ${changeSize(c)} between ${c.before} and ${c.after}, ${c.status}`,
          )
          .join('; ')}`
      : '; no change point';
    const unjudged = datasets.filter((d) => !d.judged);
    const modes = unjudged.length
      ? `; ${unjudged
          .map(
            (d) => `${d.target}, ${campaigns[d.from].name} to ${campaigns[d.to].name}: ${d.words}`,
          )
          .join('; ')}`
      : '';
    const chart = chartBox(
      `chart-cell-${i}`,
      `${figure.label} of ${cell.lines.map((l) => l.target).join(', ')} in ${cell.label} per campaign, with intervals${modes}${said}`,
      300,
    );
    chart.canvas.dataset.changes = String(markers.length);
    // Which campaigns' points each drawn line joins, and their gate mode: for tests and scripts.
    chart.canvas.dataset.segments = JSON.stringify(
      datasets.map((d) => ({
        target: d.target,
        mode: d.mode,
        campaigns: d.points.flatMap((p, k) => (p ? [campaigns[k].name] : [])),
      })),
    );
    draws.push(() => charts.add(chart.canvas, cellConfig(doc, datasets, figure, markers, zoom)));
    return h(
      'figure',
      {
        class: 'chart chart-wide series-cell',
        dataset: {
          cell: cell.label,
          targets: cell.lines.map((l) => l.target).join(','),
          changes: changes.length,
        },
      },
      h('figcaption', null, cell.label),
      zoom
        ? h(
            'p',
            { class: 'axis-note' },
            'The y axis does not start at 0: differences look larger than they are.',
          )
        : null,
      chart.box,
      changes.length
        ? h(
            'ul',
            { class: 'change-list' },
            changes.map((c) =>
              h(
                'li',
                {
                  dataset: {
                    change: `${c.before}..${c.after}`,
                    status: c.status,
                    target: c.target,
                  },
                },
                several ? `${c.target}: between ` : 'Between ',
                campaignLink(c.before),
                ' and ',
                campaignLink(c.after),
                `: ${c.direction} ${changeSize(c)} `,
                statusBadge(c.status),
              ),
            ),
          )
        : h('p', { class: 'muted small' }, 'No change point in this cell.'),
      pointsTable(doc, cell, figure, `points-${i}`),
    );
  });
  const zoomBox = h('input', {
    type: 'checkbox',
    id: 'series-zoom',
    checked: zoom,
    onchange: (e) => setZoom(e.target.checked),
  });
  return {
    el: section(
      'lines',
      `${figure.label} per campaign`,
      h(
        'p',
        { class: 'muted small' },
        `One chart per cell (scenario · load level), each target a line. Points: each campaign's estimate of the figure (the geometric mean of its valid rounds); whiskers: its ${fmtShare(doc.confidence)} interval. Vertical lines: change points, between the last campaign before and the first after, labelled with direction, size after / before and its interval, and status.`,
      ),
      anyUnjudged
        ? h(
            'p',
            { class: 'alert alert-warn', id: 'series-modes' },
            'Some campaigns ran with their gates in warn mode (or a mode not known): their windows were counted, not judged, so their points may include disturbed windows. They are drawn as hollow triangles on dashed lines (hollow diamonds, dotted, for a mode not known), and no line joins points of different gate modes.',
          )
        : null,
      h(
        'p',
        { class: 'axis-choice' },
        zoomBox,
        h(
          'label',
          { for: 'series-zoom' },
          ' Fit the y axes to the data (they then do not start at 0)',
        ),
      ),
      cells.length
        ? h('div', { class: 'chart-grid' }, figures)
        : h(
            'p',
            { class: 'muted', id: 'no-lines' },
            'No campaign of this series has a valid window yet.',
          ),
    ),
    draw: () => draws.forEach((d) => d()),
  };
}

// `diffLink(change)`: an element that shows the link to the change's profile diff, or null.
function changesSection(doc, diffLink) {
  const changes = doc.changes ?? [];
  return section(
    'changes',
    'Change points',
    h(
      'p',
      { class: 'muted small' },
      'Suspected: found in the history, not re-measured. Confirmed: a re-measurement of the build before the change against the newest, interleaved on one cell, showed it. False alarm: it did not. Unconfirmed: still undecided at the round limit (docs/history.md).',
    ),
    changes.length === 0
      ? h('p', { class: 'muted', id: 'no-changes' }, 'No change point in this series.')
      : table(
          [
            { label: 'line', get: (c) => lineLabel(c) },
            { label: 'direction', get: (c) => c.direction },
            { label: 'size (after / before)', cls: 'num nowrap', get: (c) => changeSize(c) },
            { label: 'p', cls: 'num', get: (c) => fmtNum(c.p_value, 2) },
            {
              label: 'between',
              cls: 'nowrap',
              get: (c) => h('span', null, campaignLink(c.before), ' → ', campaignLink(c.after)),
            },
            {
              label: 'versions',
              get: (c) =>
                c.version_before === c.version_after
                  ? `${c.version_before} (unchanged)`
                  : `${c.version_before} → ${c.version_after}`,
            },
            { label: 'status', get: (c) => statusBadge(c.status) },
            {
              label: 're-measured',
              get: (c) => {
                const text = remeasuredText(c);
                if (text === null) return '–';
                const by = c.remeasured.campaign;
                return h(
                  'span',
                  { dataset: { remeasured: by ?? '' }, title: c.remeasured.detail ?? '' },
                  text,
                  by ? [' (', campaignLink(by), ')'] : null,
                  diffLink(c),
                );
              },
            },
          ],
          changes,
          {
            id: 'changes-table',
            rowAttrs: (c) => ({
              dataset: { status: c.status, after: c.after, target: c.target },
            }),
          },
        ),
  );
}

export function seriesPage(el, name, figureQuery) {
  const figure = seriesFigure(figureQuery);
  const charts = new ChartSet();
  let last = null;
  let shown = false;
  document.title = `Series ${name} · benchlab`;
  replace(el, crumbs(), h('h1', null, `Series ${name}`), loading('the series'));
  const status = h('p', { class: 'poll-status', role: 'status', id: 'poll-status' });

  // Per re-measurement campaign, whether it was profiled and its baseline (the old build), read
  // once from its run of record: {baseline} or null. A campaign that could not be read is asked
  // again at the next redraw.
  const profiled = new Map();
  const profileOf = (campaign) => {
    if (!profiled.has(campaign)) {
      profiled.set(
        campaign,
        api.campaign(campaign).then(
          ({ record }) =>
            record?.profiles && record.campaign?.baseline
              ? { baseline: record.campaign.baseline }
              : null,
          () => {
            profiled.delete(campaign);
            return null;
          },
        ),
      );
    }
    return profiled.get(campaign);
  };
  // A confirmed change's link to its re-measurement's profile diff: the campaign page's Profiles
  // section preset to the change's target (the new build) against the baseline (the old one) in
  // the change's cell; filled in once the campaign is known to be profiled.
  const diffLink = (c) => {
    const by = c.remeasured?.campaign;
    if (c.status !== 'confirmed' || !by) return null;
    const slot = h('span', { class: 'profile-diff' });
    profileOf(by).then((info) => {
      if (!info || info.baseline === c.target) return;
      replace(
        slot,
        ' · ',
        h(
          'a',
          {
            href: profileHash(by, {
              target: c.target,
              compare: info.baseline,
              cell: `${c.scenario}/${c.load_level}`,
            }),
            dataset: { profileDiff: by },
            title: `${c.target} against ${info.baseline} in ${by}'s differential flame graph`,
          },
          'where the CPU went',
        ),
      );
    });
    return slot;
  };

  let zoom = false;
  let current = null;
  const render = (doc) => {
    current = doc;
    const scroll = window.scrollY;
    charts.destroy();
    const linesPart = cellsSection(doc, figure, charts, zoom, (on) => {
      zoom = on;
      render(current);
    });
    const campaigns = doc.campaigns ?? [];
    replace(
      el,
      h(
        'div',
        { class: 'page-head' },
        crumbs(),
        h('h1', null, 'Series ', h('span', { id: 'series-name' }, name)),
        h(
          'p',
          { class: 'meta' },
          `${campaigns.length} campaign${campaigns.length === 1 ? '' : 's'}, oldest first`,
          campaigns.length
            ? [
                ': ',
                campaignLink(campaigns[0].name),
                ` (${fmtTime(campaigns[0].created_at)})`,
                campaigns.length > 1
                  ? [
                      ' to ',
                      campaignLink(campaigns[campaigns.length - 1].name),
                      ` (${fmtTime(campaigns[campaigns.length - 1].created_at)})`,
                    ]
                  : null,
              ]
            : null,
          `. ${figure.label}: ${doc.better} is better.`,
        ),
        figureSelector(name, figure),
      ),
      status,
      linesPart.el,
      changesSection(doc, diffLink),
    );
    linesPart.draw();
    el.dataset.figure = doc.figure;
    if (shown) window.scrollTo(0, scroll);
    shown = true;
  };

  const poller = new Poller(
    POLL_MS,
    async () => {
      const doc = await api.series(name, figure.query);
      status.textContent = '';
      const text = JSON.stringify(doc);
      if (text !== last) {
        render(doc);
        last = text;
      }
    },
    (err) => {
      if (!shown) {
        const missing = err instanceof ApiError && err.status === 404;
        replace(
          el,
          crumbs(),
          h('h1', null, `Series ${name}`),
          errorBox(err, missing ? 'No such series' : 'Cannot load the series'),
        );
        if (missing) poller.stop();
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
