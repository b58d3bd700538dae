// One flame graph with its search box and "Reset zoom" button (d3-flame-graph), as the campaign
// page's Profiles section and the window page draw it (docs/profiles.md). Trees are
// GET /api/v1/campaigns/NAME/profile's or /profile-diff's (docs/api.md). A click on a frame zooms
// into it; the search highlights the frames whose name holds the text, whatever its case, and the
// details line counts their samples. A search typed before a tree arrives applies to it.

import { select } from 'd3-selection';
import flamegraph, { colorMapper } from 'd3-flame-graph';
// The package's stylesheet, which its "exports" leave out, by its path: bundled into app.css.
import '../node_modules/d3-flame-graph/dist/d3-flamegraph.css';
import { h, replace } from './dom.js';
import { fmtInt, fmtNum, isNum } from './format.js';
import { diffLabel, frameMatches } from './profile_model.js';

// A signed sample count: "+12", "−3.5", "0".
export function fmtDelta(v) {
  if (!isNum(v)) return '–';
  return `${v > 0 ? '+' : v < 0 ? '−' : ''}${fmtNum(Math.abs(v))}`;
}

// {graph, details, searchControl, resetZoom, draw(tree, {compare}), clear()}: the caller places
// the elements; draw() (re)draws a tree, differential when `compare` names the base target.
export function flameGraph() {
  let chart = null;
  let term = '';

  const graph = h('div', { id: 'flamegraph', class: 'flamegraph' });
  const details = h('p', { id: 'profile-details', class: 'muted small', 'aria-live': 'polite' });
  const search = h('input', {
    id: 'profile-search',
    type: 'search',
    placeholder: 'function name',
    oninput: (e) => {
      term = e.target.value.trim();
      if (!chart) return;
      if (term) chart.search(term);
      else chart.clear();
    },
  });
  const searchControl = h('label', { class: 'profile-control' }, 'Search ', search);
  const resetZoom = h(
    'button',
    { type: 'button', id: 'profile-reset-zoom', onclick: () => chart?.resetZoom() },
    'Reset zoom',
  );

  const clear = () => {
    if (chart) chart.destroy();
    chart = null;
    replace(graph);
  };

  const draw = (tree, { compare = '' } = {}) => {
    clear();
    const diff = Boolean(compare);
    const total = Number(tree?.value ?? 0);
    chart = flamegraph()
      .width(Math.max(320, graph.clientWidth || 960))
      .cellHeight(18)
      .transitionDuration(200)
      .minFrameSize(1)
      .sort(true)
      .setDetailsElement(details)
      .setSearchMatch((d, t) => frameMatches(d.data.name, t))
      .getName((d) => (diff ? diffLabel(d.data, total) : d.data.name))
      .label((d) =>
        diff
          ? `${diffLabel(d.data, total)}: ${fmtInt(d.data.value)} samples, ${fmtInt(d.data.base)} in ${compare}; change ${fmtDelta(d.data.delta)} samples at ${compare}'s shares`
          : `${d.data.name}: ${fmtInt(d.data.value)} samples (${(100 * (d.x1 - d.x0) || 0).toFixed(1)}%)`,
      );
    if (diff) chart.setColorMapper(colorMapper.differentialColorMapper);
    select(graph).datum(tree).call(chart);
    if (term) chart.search(term);
  };

  return { graph, details, searchControl, resetZoom, draw, clear };
}
