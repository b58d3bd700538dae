// The campaign page's "Profiles" section (docs/profiles.md): pick a target and a cell, see the
// flame graph of its valid windows' CPU profiles (GET /api/v1/campaigns/NAME/profile), or of one
// of them ("Window"), search it and zoom by clicking a frame. "Compare to" another target draws
// the differential flame graph (/profile-diff): frames that grew are marked "+" and drawn red,
// those that shrank "−" and blue, with the frames that vanished (only in the compared target)
// listed with their samples, and the functions whose CPU µs per request changed most in a table.
// A campaign that was not profiled says how to profile one. The section is built once per page
// and kept across the campaign's redraws, so a choice made survives polling; the page's hash
// query may preset the choices (profileState).

import { h, replace, table } from '../dom.js';
import { api, ApiError } from '../api.js';
import { fmtInt, fmtNum, fmtRange, fmtShare, isNum } from '../format.js';
import { errorBox } from '../ui.js';
import { flameGraph, fmtDelta } from '../flame.js';
import { profileChoices, profileState, profileWindows, vanishedFrames } from '../profile_model.js';

const TOP_FUNCTIONS = 15;
const VANISHED_SHOWN = 20;

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

export function profilesSection(name, initialRecord, query = {}) {
  let record = initialRecord;
  const choices = profileChoices(record);
  const state = profileState(record, query);
  let request = 0;

  const flame = flameGraph();
  const summaryLine = h('p', { id: 'profile-summary' });
  const extra = h('div', { id: 'profile-extra' });
  const body = h('div', { id: 'profile-body' });

  const compareOptions = () => [
    { value: '', label: 'nothing' },
    ...choices.targets
      .filter((t) => t !== state.target)
      .map((t) => ({ value: t, label: t === choices.baseline ? `${t} (baseline)` : t })),
  ];
  // Every valid profiled window of the target in the cell, or one of them.
  const windowOptions = () => {
    const windows = profileWindows(record, state.target, state.cell);
    return [
      { value: '', label: `all valid (${windows.length})` },
      ...windows.map((w) => ({ value: String(w.id), label: w.label })),
    ];
  };
  let shownWindows = '';
  const controls = h('div', { class: 'profile-controls' });
  const drawControls = () => {
    const windows = windowOptions();
    shownWindows = windows.map((w) => w.value).join(',');
    replace(
      controls,
      select_(
        'profile-target',
        'Target',
        choices.targets.map((t) => ({ value: t, label: t })),
        state.target,
        (e) => {
          state.target = e.target.value;
          state.window = '';
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
          state.window = '';
          drawControls();
          load();
        },
      ),
      // One window's profile, or the cell's: a comparison is of the cell's, so either clears
      // the other.
      select_('profile-window', 'Window', windows, state.window, (e) => {
        state.window = e.target.value;
        if (state.window) state.compare = '';
        drawControls();
        load();
      }),
      select_('profile-compare', 'Compare to', compareOptions(), state.compare, (e) => {
        state.compare = e.target.value;
        if (state.compare) state.window = '';
        drawControls();
        load();
      }),
      flame.searchControl,
      flame.resetZoom,
    );
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
    flame.clear();
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
        const doc = await api.profile(name, {
          target: state.target,
          cell: state.cell,
          window: state.window,
        });
        if (mine !== request) return;
        const which = state.window
          ? `, window ${profileWindows(record, state.target, state.cell).find((w) => String(w.id) === state.window)?.label ?? `#${state.window}`}`
          : '';
        summaryLine.textContent = `${doc.target} in ${state.cell}${which}: ${fmtInt(doc.windows)} window(s), ${fmtInt(doc.samples)} samples at ${doc.frequency_hz} Hz, ${fmtNum(doc.cpu_us_per_request)} CPU µs per request${doc.truncated ? ' (cut by the profile limits)' : ''}.`;
        summaryLine.dataset.samples = String(doc.samples);
        replace(extra);
        replace(body, flame.details, flame.graph, extra);
        flame.draw(doc.tree);
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
        summaryLine.dataset.samples = String(doc.new_samples);
        replace(extra, legend(), vanishedList(doc.tree), functionsTable(d));
        replace(body, flame.details, flame.graph, extra);
        flame.draw(doc.tree, { compare: state.compare });
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
      'Where the CPU goes: a flame graph of the valid windows’ CPU profiles (or of one window), widest frames most samples. Click a frame to zoom, search to highlight.',
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
    // A newer run of record: the Window choice lists the windows stored since, the rest stays.
    update: (next) => {
      record = next;
      if (
        windowOptions()
          .map((w) => w.value)
          .join(',') !== shownWindows
      )
        drawControls();
    },
    destroy: () => {
      request++;
      flame.clear();
    },
  };
}
