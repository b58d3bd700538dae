// The campaign page's "Profiles" section (docs/profiles.md): pick a target and a cell, see the
// flame graph of its valid windows' CPU profiles (GET /api/v1/campaigns/NAME/profile), search
// it and zoom by clicking a frame. "Compare to" another target draws the differential flame
// graph (/profile-diff): frames that grew are marked "+" and drawn red, those that shrank "−"
// and blue, with the frames that vanished (only in the compared target) listed with their
// samples, and the functions whose CPU µs per request changed most in a table. A campaign that
// was not profiled says how to profile one. The section is built once per page and kept across
// the campaign's redraws, so a choice made survives polling.

import { select } from 'd3-selection';
import flamegraph, { colorMapper } from 'd3-flame-graph';
// The package's stylesheet, which its "exports" leave out, by its path: bundled into app.css.
import '../../node_modules/d3-flame-graph/dist/d3-flamegraph.css';
import { h, replace, table } from '../dom.js';
import { api, ApiError } from '../api.js';
import { fmtInt, fmtNum, fmtRange, fmtShare, isNum } from '../format.js';
import { errorBox } from '../ui.js';
import {
  profileChoices,
  changeMark,
  diffLabel,
  vanishedFrames,
  frameMatches,
} from '../profile_model.js';

const TOP_FUNCTIONS = 15;
const VANISHED_SHOWN = 20;

function fmtDelta(v) {
  if (!isNum(v)) return '–';
  return `${v > 0 ? '+' : v < 0 ? '−' : ''}${fmtNum(Math.abs(v))}`;
}

function select_(id, label, options, value, onchange) {
  return h(
    'label',
    { class: 'profile-control' },
    `${label} `,
    h(
      'select',
      { id, onchange },
      options.map((o) => h('option', { value: o.value, selected: o.value === value }, o.label)),
    ),
  );
}

export function profilesSection(name, record) {
  const choices = profileChoices(record);
  const state = {
    target: choices.targets.find((t) => t !== choices.baseline) ?? choices.targets[0] ?? '',
    cell: choices.cells[0]?.key ?? '',
    compare: '',
    term: '',
  };
  let chart = null;
  let request = 0;

  const graph = h('div', { id: 'flamegraph', class: 'flamegraph' });
  const details = h('p', { id: 'profile-details', class: 'muted small', 'aria-live': 'polite' });
  const summaryLine = h('p', { id: 'profile-summary' });
  const extra = h('div', { id: 'profile-extra' });
  const body = h('div', { id: 'profile-body' });
  const search = h('input', {
    id: 'profile-search',
    type: 'search',
    placeholder: 'function name',
    oninput: (e) => {
      state.term = e.target.value.trim();
      if (!chart) return;
      if (state.term) chart.search(state.term);
      else chart.clear();
    },
  });
  const resetZoom = h(
    'button',
    { type: 'button', id: 'profile-reset-zoom', onclick: () => chart?.resetZoom() },
    'Reset zoom',
  );

  const compareOptions = () => [
    { value: '', label: 'nothing' },
    ...choices.targets
      .filter((t) => t !== state.target)
      .map((t) => ({ value: t, label: t === choices.baseline ? `${t} (baseline)` : t })),
  ];
  const controls = h('div', { class: 'profile-controls' });
  const drawControls = () =>
    replace(
      controls,
      select_(
        'profile-target',
        'Target',
        choices.targets.map((t) => ({ value: t, label: t })),
        state.target,
        (e) => {
          state.target = e.target.value;
          if (state.compare === state.target) state.compare = '';
          drawControls();
          load();
        },
      ),
      select_(
        'profile-cell',
        'Cell',
        choices.cells.map((c) => ({ value: c.key, label: c.label })),
        state.cell,
        (e) => {
          state.cell = e.target.value;
          load();
        },
      ),
      select_('profile-compare', 'Compare to', compareOptions(), state.compare, (e) => {
        state.compare = e.target.value;
        load();
      }),
      h('label', { class: 'profile-control' }, 'Search ', search),
      resetZoom,
    );

  const draw = (tree, diff) => {
    if (chart) chart.destroy();
    replace(graph);
    const total = Number(tree?.value ?? 0);
    chart = flamegraph()
      .width(Math.max(320, graph.clientWidth || 960))
      .cellHeight(18)
      .transitionDuration(200)
      .minFrameSize(1)
      .sort(true)
      .setDetailsElement(details)
      .setSearchMatch((d, term) => frameMatches(d.data.name, term))
      .getName((d) => (diff ? diffLabel(d.data, total) : d.data.name))
      .label((d) =>
        diff
          ? `${diffLabel(d.data, total)}: ${fmtInt(d.data.value)} samples, ${fmtInt(d.data.base)} in ${state.compare}; change ${fmtDelta(d.data.delta)} samples at ${state.compare}'s shares`
          : `${d.data.name}: ${fmtInt(d.data.value)} samples (${(100 * (d.x1 - d.x0) || 0).toFixed(1)}%)`,
      );
    if (diff) chart.setColorMapper(colorMapper.differentialColorMapper);
    select(graph).datum(tree).call(chart);
    if (state.term) chart.search(state.term);
  };

  const legend = () =>
    h(
      'ul',
      { id: 'profile-legend', class: 'profile-legend', 'aria-label': 'legend' },
      h(
        'li',
        { class: 'grown' },
        h('strong', null, '+ name'),
        ` grew: more of ${state.target}'s time than of ${state.compare}'s (red)`,
      ),
      h('li', { class: 'shrunk' }, h('strong', null, '− name'), ' shrank: less of its time (blue)'),
      h('li', null, h('strong', null, 'name'), ' held within 0.5% of the samples (grey)'),
    );

  const functionsTable = (cell) => {
    const rows = (cell?.functions ?? []).slice(0, TOP_FUNCTIONS);
    if (rows.length === 0)
      return h('p', { class: 'muted' }, 'No function changed by enough samples to compare.');
    return table(
      [
        { label: 'Function', get: (f) => h('code', null, f.function) },
        {
          label: `${cell.base} µs/req`,
          cls: 'num',
          get: (f) => fmtNum(f.base_self_us_per_request),
        },
        { label: `${cell.new} µs/req`, cls: 'num', get: (f) => fmtNum(f.new_self_us_per_request) },
        { label: 'Δ self µs/req', cls: 'num', get: (f) => fmtDelta(f.self_delta_us) },
        {
          label: 'interval',
          cls: 'num',
          title: `${cell.rounds} paired round(s); none with one`,
          get: (f) => (isNum(f.low) && isNum(f.high) ? fmtRange(f.low, f.high) : '–'),
        },
        {
          label: 'share',
          cls: 'num',
          title: 'part of the whole change',
          get: (f) => fmtShare(f.share),
        },
      ],
      rows,
      {
        id: 'profile-functions',
        caption: `Functions whose self CPU µs per request changed most, ${cell.new} against ${cell.base} over ${cell.rounds} paired round(s)`,
        rowAttrs: (f) => ({ dataset: { function: f.function } }),
      },
    );
  };

  // The frames only the compared target has, largest first: each with the last frames of its
  // stack (the whole stack in its title), the first VANISHED_SHOWN of them and a count of the rest.
  const vanishedList = (tree) => {
    const gone = vanishedFrames(tree);
    const shown = gone.slice(0, VANISHED_SHOWN);
    return h(
      'div',
      { id: 'profile-vanished' },
      h('h3', null, `Vanished: only in ${state.compare}`),
      gone.length === 0
        ? h(
            'p',
            { class: 'muted' },
            `None: every frame of ${state.compare} is in ${state.target} too.`,
          )
        : h(
            'ul',
            null,
            shown.map((f) =>
              h(
                'li',
                {
                  dataset: { frame: f.name, base: f.base },
                  title: [...f.path, f.name].join(' › '),
                },
                h(
                  'span',
                  { class: 'muted' },
                  f.path.length > 2 ? '… › ' : '',
                  f.path.slice(-2).map((p) => `${p} › `),
                ),
                h('code', null, `− ${f.name}`),
                `: ${fmtInt(f.base)} samples in ${state.compare}`,
              ),
            ),
            gone.length > shown.length
              ? h(
                  'li',
                  { class: 'muted' },
                  `and ${gone.length - shown.length} more, of fewer samples`,
                )
              : null,
          ),
    );
  };

  const fail = (err) => {
    if (chart) chart.destroy();
    chart = null;
    const none = err instanceof ApiError && err.status === 404 && /profil/.test(err.message);
    replace(
      body,
      none
        ? h(
            'p',
            { id: 'profiles-none', class: 'muted' },
            'No profiles: enable [profile] (enabled = true in the campaign file, or --profile on run and submit) to see where the CPU goes. ',
            h('span', { class: 'small' }, err.message),
          )
        : errorBox(err, 'Cannot load the profile'),
    );
  };

  async function load() {
    const mine = ++request;
    summaryLine.textContent = 'Loading…';
    try {
      if (!state.compare) {
        const doc = await api.profile(name, { target: state.target, cell: state.cell });
        if (mine !== request) return;
        summaryLine.textContent = `${doc.target} in ${state.cell}: ${fmtInt(doc.windows)} window(s), ${fmtInt(doc.samples)} samples at ${doc.frequency_hz} Hz, ${fmtNum(doc.cpu_us_per_request)} CPU µs per request${doc.truncated ? ' (cut by the profile limits)' : ''}.`;
        replace(extra);
        replace(body, details, graph, extra);
        draw(doc.tree, false);
      } else {
        const doc = await api.profileDiff(name, {
          base: state.compare,
          new: state.target,
          cell: state.cell,
        });
        if (mine !== request) return;
        const d = doc.diff;
        summaryLine.textContent = d
          ? `${doc.new} against ${doc.base} in ${state.cell}: ${fmtNum(d.new_us_per_request)} vs ${fmtNum(d.base_us_per_request)} CPU µs per request, ${fmtDelta(d.delta_us)} (${isNum(d.low) ? fmtRange(d.low, d.high) : 'no interval with one round'}); ${fmtInt(doc.new_samples)} and ${fmtInt(doc.base_samples)} samples.`
          : `${doc.new} against ${doc.base} in ${state.cell}.`;
        replace(extra, legend(), vanishedList(doc.tree), functionsTable(d));
        replace(body, details, graph, extra);
        draw(doc.tree, true);
      }
    } catch (err) {
      if (mine !== request) return;
      summaryLine.textContent = '';
      fail(err);
    }
  }

  const el = h(
    'section',
    { id: 'profiles', class: 'panel', 'aria-labelledby': 'profiles-title' },
    h('h2', { id: 'profiles-title' }, 'Profiles'),
    h(
      'p',
      { class: 'muted small' },
      'Where the CPU goes: a flame graph of the valid windows’ CPU profiles, widest frames most samples. Click a frame to zoom, search to highlight.',
    ),
    controls,
    summaryLine,
    body,
  );
  drawControls();
  if (choices.targets.length && choices.cells.length) load();
  else replace(body, h('p', { class: 'muted' }, 'No cells yet.'));
  return {
    el,
    destroy: () => {
      request++;
      if (chart) chart.destroy();
      chart = null;
    },
  };
}
