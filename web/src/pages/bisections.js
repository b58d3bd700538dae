// #/bisections and #/bisections/ID : the searches of `benchlab bisect` (docs/methodology.md,
// "Bisection") as GET /api/v1/bisections and /api/v1/bisections/ID give them. The list: each
// search with its state and its culprit line. A search: its culprit line, a chart of the range
// shrinking step by step (bisect_model.js) with each decided commit a point shaped and coloured by
// its decision, and a table of the steps with their figures and the campaigns that measured them.
// Both poll while a search runs. Everything the API says is put in the page as text.

import { h, replace, table, badge } from '../dom.js';
import { api, ApiError } from '../api.js';
import { fmtTime, fmtInt } from '../format.js';
import {
  bisectRange,
  pointsByDecision,
  rangeWords,
  estimateText,
  stepCampaigns,
  shortOid,
  bisectionHash,
} from '../bisect_model.js';
import { ChartSet, chartBox, legendBelow } from '../charts.js';
import { profileHash } from '../profile_model.js';
import { errorBox, loading, Poller, section } from '../ui.js';

const RUNNING_POLL_MS = 3000;
const IDLE_POLL_MS = 15000;

const crumbs = (...rest) =>
  h('p', { class: 'crumbs' }, h('a', { href: '#/bisections' }, 'Bisections'), ...rest);

const bisectionLink = (b, text) =>
  h('a', { href: bisectionHash(b.id), dataset: { bisectionLink: String(b.id) } }, text);

// A state or decision as a badge ("build failed" is styled as badge-buildfailed).
const stateBadge = (word) => badge(word ?? 'unknown');

// Polls `load` every RUNNING_POLL_MS while `running(doc)`, else every IDLE_POLL_MS, and calls
// `render` when the document changed. `title` heads the page while nothing could be read.
function pollPage(el, title, what, load, running, render, destroyExtra) {
  let last = null;
  let shown = false;
  const status = h('p', { class: 'poll-status', role: 'status', id: 'poll-status' });
  const poller = new Poller(
    RUNNING_POLL_MS,
    async () => {
      const doc = await load();
      status.textContent = '';
      const text = JSON.stringify(doc);
      if (text !== last) {
        render(doc, status);
        last = text;
        shown = true;
      }
      poller.ms = running(doc) ? RUNNING_POLL_MS : IDLE_POLL_MS;
    },
    (err) => {
      if (!shown) {
        replace(el, title(), errorBox(err, what));
        // A search that is not there will not appear: stop asking.
        if (err instanceof ApiError && err.status === 404) poller.stop();
        return;
      }
      status.textContent = `Updates paused: ${err.message}; retrying…`;
    },
  ).start(true);
  return {
    destroy: () => {
      poller.stop();
      if (destroyExtra) destroyExtra();
    },
  };
}

function renderList(el, doc, status) {
  const list = doc.bisections ?? [];
  replace(
    el,
    h(
      'div',
      { class: 'page-head' },
      h('h1', null, 'Bisections'),
      h(
        'p',
        { class: 'lede' },
        list.length === 0
          ? 'No bisection yet.'
          : `${list.length} search${list.length === 1 ? '' : 'es'} for the commit that caused a regression, newest first.`,
      ),
    ),
    status,
    list.length === 0
      ? h(
          'div',
          { class: 'empty', id: 'no-bisections' },
          h(
            'p',
            null,
            'Start one with ',
            h('code', null, 'benchlab bisect --change ID'),
            ' for a confirmed regression, or with its good and bad commits named (docs/methodology.md, "Running a bisection").',
          ),
        )
      : table(
          [
            {
              label: 'Bisection',
              cls: 'num',
              get: (b) => bisectionLink(b, h('strong', null, String(b.id))),
            },
            { label: 'Started', cls: 'nowrap', get: (b) => fmtTime(b.created_at) },
            { label: 'Target', get: (b) => b.target },
            { label: 'Cell', get: (b) => b.cell },
            { label: 'Figure', get: (b) => h('code', null, b.figure) },
            { label: 'State', get: (b) => stateBadge(b.state) },
            { label: 'Commits', cls: 'num', get: (b) => fmtInt(b.commits) },
            { label: 'Result', get: (b) => bisectionLink(b, b.line) },
          ],
          list,
          {
            id: 'bisections',
            rowAttrs: (b) => ({ dataset: { bisection: String(b.id), state: b.state } }),
          },
        ),
  );
}

export function bisectionsPage(el) {
  document.title = 'Bisections · benchlab';
  replace(el, h('h1', null, 'Bisections'), loading('the bisections'));
  return pollPage(
    el,
    () => h('h1', null, 'Bisections'),
    'Cannot list the bisections',
    () => api.bisections(),
    (doc) => (doc.bisections ?? []).some((b) => b.state === 'running'),
    (doc, status) => renderList(el, doc, status),
  );
}

// The chart: x the step (0 the start), y the commit's position in the range (0 the good end);
// the band from the last good to the first bad position after each step, and each decided commit
// a point of its decision's colour and shape.
function rangeConfig(range) {
  const lastStep = range.band[range.band.length - 1].step;
  // The range after the last step is held for half a step more, so the points of the last step
  // are not drawn on the chart's edge; the y axis has half a commit of room at either end.
  const edge = lastStep + 0.5;
  const held = [...range.band, { ...range.band[range.band.length - 1], step: edge }];
  const low = held.map((b) => ({ x: b.step, y: b.low }));
  const high = held.map((b) => ({ x: b.step, y: b.high }));
  const bandColour = 'rgba(0, 114, 178, 0.18)';
  const bandEdge = '#0072B2';
  return {
    type: 'line',
    data: {
      datasets: [
        {
          label: 'last good',
          data: low,
          stepped: true,
          borderColor: bandEdge,
          borderWidth: 1.5,
          pointRadius: 0,
          fill: false,
          legendEntry: false,
        },
        {
          label: 'range still suspected',
          data: high,
          stepped: true,
          borderColor: bandEdge,
          borderWidth: 1.5,
          backgroundColor: bandColour,
          pointRadius: 0,
          fill: '-1',
          legendEntry: true,
        },
        ...pointsByDecision(range).map((g) => ({
          label: g.label,
          data: g.points.map((p) => ({ x: p.step, y: p.position, point: p })),
          showLine: false,
          borderColor: g.colour,
          backgroundColor: g.colour,
          pointStyle: g.pointStyle,
          pointRadius: 6,
          pointHoverRadius: 8,
          pointBorderWidth: 2,
          legendEntry: true,
        })),
      ],
    },
    options: {
      scales: {
        x: {
          type: 'linear',
          min: 0,
          max: Math.max(edge, 1),
          ticks: { stepSize: 1, precision: 0, includeBounds: false },
          title: { display: true, text: 'step (0: the start)' },
        },
        y: {
          type: 'linear',
          min: -0.5,
          max: range.last + 0.5,
          ticks: { precision: 0, includeBounds: false },
          title: { display: true, text: 'commit position (0: good end)' },
        },
      },
      plugins: {
        legend: legendBelow(),
        tooltip: {
          // A point's step, or the band where a step is (not where it is held past the last).
          filter: (item) =>
            Boolean(item.raw?.point) ||
            (item.datasetIndex === 1 && range.band.some((b) => b.step === item.raw?.x)),
          callbacks: {
            label: (ctx) => {
              const p = ctx.raw?.point;
              if (p) return `step ${p.step}: ${shortOid(p.oid)} ${p.decision} at ${p.position}`;
              const b = range.band.find((x) => x.step === ctx.raw?.x);
              return b ? `after step ${b.step}: ${b.low} to ${b.high}` : '';
            },
            afterLabel: (ctx) => ctx.raw?.point?.subject ?? '',
          },
        },
      },
    },
  };
}

function campaignLinks(step) {
  const list = stepCampaigns(step);
  if (!list.length) return h('span', { class: 'muted' }, '–');
  return h(
    'span',
    null,
    list.map((c, i) => [
      i ? ', ' : null,
      c.name !== null
        ? h(
            'a',
            {
              href: `#/campaigns/${encodeURIComponent(c.name)}`,
              dataset: { campaignLink: c.name },
            },
            c.name,
          )
        : h('span', { class: 'muted', title: 'not stored any more' }, `#${c.id}`),
    ]),
  );
}

function stepsTable(doc) {
  const steps = doc.steps ?? [];
  if (!steps.length) return h('p', { class: 'muted', id: 'no-steps' }, 'No commit decided yet.');
  return table(
    [
      { label: 'Step', cls: 'num', get: (s) => String(s.step) },
      {
        label: 'Position',
        cls: 'num',
        title: "the commit's index in the range, 0 the good end",
        get: (s) => (Number.isInteger(s.position) ? String(s.position) : '–'),
      },
      { label: 'Commit', get: (s) => h('code', { title: s.oid }, shortOid(s.oid)) },
      { label: 'Subject', get: (s) => s.subject },
      { label: 'Decision', get: (s) => stateBadge(s.decision) },
      { label: 'Rounds', cls: 'num', get: (s) => String(s.rounds ?? 0) },
      {
        label: 'Candidate / midpoint [interval]',
        cls: 'num nowrap',
        title: "the candidate's figure over the midpoint of the ends', with its interval",
        get: (s) => estimateText(s),
      },
      { label: 'Campaigns', get: (s) => campaignLinks(s) },
    ],
    steps,
    {
      id: 'bisect-steps',
      rowAttrs: (s) => ({
        dataset: {
          step: String(s.step),
          decision: s.decision,
          position: Number.isInteger(s.position) ? String(s.position) : '',
        },
      }),
    },
  );
}

function renderOne(el, doc, status, charts) {
  charts.destroy();
  const range = bisectRange(doc);
  const chart = chartBox('chart-range', rangeWords(doc, range), 320);
  chart.canvas.dataset.band = JSON.stringify(range.band);
  const found = doc.state === 'found';
  replace(
    el,
    h(
      'div',
      { class: 'page-head' },
      crumbs(' / ', String(doc.id)),
      h('h1', null, `Bisection ${doc.id} `, stateBadge(doc.state)),
      h(
        'p',
        {
          id: 'culprit-line',
          class: found ? 'lede strong' : 'lede',
          dataset: { state: doc.state },
        },
        doc.line ?? '',
      ),
      h(
        'p',
        { class: 'meta' },
        `${doc.target} in ${doc.cell}, ${doc.figure}; ${fmtInt(doc.commits)} commits from `,
        h('code', { title: doc.good }, shortOid(doc.good)),
        ' (good) to ',
        h('code', { title: doc.bad }, shortOid(doc.bad)),
        ` (bad); started ${fmtTime(doc.created_at)}.`,
        doc.culprit_campaign
          ? [
              ' The culprit against its parent: ',
              h(
                'a',
                {
                  href: `#/campaigns/${encodeURIComponent(doc.culprit_campaign)}`,
                  dataset: { campaignLink: doc.culprit_campaign },
                },
                doc.culprit_campaign,
              ),
              ', ',
              // The look's builds are named T-good (the parent) and T-candidate (the culprit),
              // coordinator/server/bisect_plan.h.
              h(
                'a',
                {
                  href: profileHash(doc.culprit_campaign, {
                    target: `${doc.target}-candidate`,
                    compare: `${doc.target}-good`,
                    cell: doc.cell,
                  }),
                  dataset: { profileDiff: doc.culprit_campaign },
                },
                'where the CPU went',
              ),
              '.',
            ]
          : null,
      ),
      doc.result && !found ? h('p', { id: 'bisect-result' }, doc.result) : null,
    ),
    status,
    section(
      'range',
      'The range, step by step',
      h(
        'p',
        { class: 'muted small' },
        'Each step measures one commit between the last good and the first bad: good raises the low end to it, bad lowers the high end; a failed build or an undecided commit leaves the range. The shaded band is what is still suspected.',
      ),
      range.unplaced
        ? h(
            'p',
            { class: 'alert alert-warn', id: 'unplaced-steps' },
            `${range.unplaced} step${range.unplaced === 1 ? ' was' : 's were'} stored without ${range.unplaced === 1 ? 'its' : 'their'} position in the range: not drawn, and the band does not count ${range.unplaced === 1 ? 'it' : 'them'}.`,
          )
        : null,
      h('figure', { class: 'chart chart-wide' }, chart.box),
    ),
    section('steps', 'Steps', stepsTable(doc)),
  );
  charts.add(chart.canvas, rangeConfig(range));
}

export function bisectionPage(el, id) {
  document.title = `Bisection ${id} · benchlab`;
  const charts = new ChartSet();
  const title = () => [crumbs(' / ', String(id)), h('h1', null, `Bisection ${id}`)];
  replace(el, title(), loading('the bisection'));
  return pollPage(
    el,
    title,
    `Cannot show bisection ${id}`,
    () => api.bisection(id),
    (doc) => doc.state === 'running',
    (doc, status) => renderOne(el, doc, status, charts),
    () => charts.destroy(),
  );
}
