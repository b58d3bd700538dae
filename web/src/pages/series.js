// #/series/NAME[?figure=rps|cpu|p99] : a campaign series (docs/history.md). Per line (pair,
// scenario, load level, target) a chart of each campaign's estimate of the figure with its
// interval as whiskers, campaigns oldest first, each change point marked between its campaigns
// in the style of its status; then every change in a table with its status. Polls slowly (a new
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
  changesOfLine,
  changeMarker,
  changeSize,
  remeasuredText,
} from '../series_model.js';
import { profileHash } from '../profile_model.js';
import { ChartSet, chartBox, colourOf } from '../charts.js';
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

function lineConfig(doc, line, figure, markers) {
  const points = alignedPoints(doc, line);
  const values = points.flatMap((p) => (p ? [p.estimate, p.low, p.high] : [])).filter(isNum);
  const low = Math.min(...values);
  const high = Math.max(...values);
  const pad = values.length ? Math.max((high - low) * 0.15, Math.abs(high) * 0.02) : 1;
  const c = colourOf(0);
  return {
    type: 'line',
    data: {
      labels: (doc.campaigns ?? []).map((x) => x.name),
      datasets: [
        {
          label: line.target,
          data: points.map((p) => (p && isNum(p.estimate) ? p.estimate : null)),
          whiskers: points.map((p) =>
            p && isNum(p.low) && isNum(p.high) ? { min: p.low, max: p.high } : null,
          ),
          borderColor: c,
          backgroundColor: c,
          pointRadius: 4,
          spanGaps: true,
        },
      ],
    },
    options: {
      scales: {
        y: {
          // A figure is never below 0: the axis does not go there for an interval's padding.
          suggestedMin: values.length ? Math.max(low >= 0 ? 0 : -Infinity, low - pad) : undefined,
          suggestedMax: values.length ? high + pad : undefined,
          title: { display: true, text: figure.unit },
        },
        x: { grid: { display: false }, ticks: { autoSkip: true, maxRotation: 45 } },
      },
      layout: { padding: { top: 40 } }, // room for the change points' labels
      plugins: {
        legend: { display: false },
        markers: { list: markers },
        tooltip: {
          callbacks: {
            label: (ctx) => `${fmtNum(ctx.parsed.y)} ${figure.unit} (estimate)`,
            afterLabel: (ctx) => {
              const p = points[ctx.dataIndex];
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

// The points of a line as a table, for reading the figures (and for screen readers).
function pointsTable(doc, line, figure, id) {
  const rows = (doc.campaigns ?? [])
    .map((c, i) => ({ c, p: alignedPoints(doc, line)[i] }))
    .filter((r) => r.p);
  return h(
    'details',
    { class: 'series-points' },
    h('summary', null, `The figures (${rows.length} campaign${rows.length === 1 ? '' : 's'})`),
    table(
      [
        { label: 'campaign', get: (r) => campaignLink(r.c.name) },
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
      { id, rowAttrs: (r) => ({ dataset: { campaign: r.c.name } }) },
    ),
  );
}

function statusBadge(status) {
  return badge(status ?? 'no status');
}

function linesSection(doc, figure, charts) {
  const lines = doc.lines ?? [];
  const draws = [];
  const figures = lines.map((line, i) => {
    const changes = changesOfLine(doc, line);
    const markers = changes.map((c) => changeMarker(doc, c)).filter(Boolean);
    const said = changes.length
      ? `; ${changes.length} change point${changes.length === 1 ? '' : 's'}: ${changes
          .map(
            (c) =>
              `${c.direction} ${changeSize(c)} between ${c.before} and ${c.after}, ${c.status}`,
          )
          .join('; ')}`
      : '; no change point';
    const chart = chartBox(
      `chart-line-${i}`,
      `${figure.label} of ${lineLabel(line)} per campaign, with intervals${said}`,
      280,
    );
    chart.canvas.dataset.changes = String(markers.length);
    draws.push(() => charts.add(chart.canvas, lineConfig(doc, line, figure, markers)));
    return h(
      'figure',
      {
        class: 'chart chart-wide series-line',
        dataset: { line: lineLabel(line), target: line.target, changes: changes.length },
      },
      h('figcaption', null, lineLabel(line)),
      chart.box,
      changes.length
        ? h(
            'ul',
            { class: 'change-list' },
            changes.map((c) =>
              h(
                'li',
                { dataset: { change: `${c.before}..${c.after}`, status: c.status } },
                `Between `,
                campaignLink(c.before),
                ' and ',
                campaignLink(c.after),
                `: ${c.direction} ${changeSize(c)} `,
                statusBadge(c.status),
              ),
            ),
          )
        : h('p', { class: 'muted small' }, 'No change point on this line.'),
      pointsTable(doc, line, figure, `points-${i}`),
    );
  });
  return {
    el: section(
      'lines',
      `${figure.label} per campaign`,
      h(
        'p',
        { class: 'muted small' },
        `Points: each campaign's estimate of the figure (the geometric mean of its valid rounds); whiskers: its ${fmtShare(doc.confidence)} interval. Vertical lines: change points, between the last campaign before and the first after, labelled with direction, size after / before and its interval, and status.`,
      ),
      lines.length
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

  const render = (doc) => {
    const scroll = window.scrollY;
    charts.destroy();
    const linesPart = linesSection(doc, figure, charts);
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
