// The series page's pure logic (GET /api/v1/series/NAME, docs/api.md): which figures it offers,
// the lines grouped by cell, each line's points by campaign cut where the gate mode changes,
// where a change point sits between its campaigns, and how a change's size and status read.

import { isNum, levelLabel } from './format.js';
import { gateJudgement } from './model.js';

// The figures the page offers: the query's word, the document's `figure`, the label and unit.
export const SERIES_FIGURES = [
  { query: 'rps', figure: 'rps', label: 'req/s', unit: 'req/s' },
  { query: 'cpu', figure: 'cpu_us_per_request', label: 'CPU per request', unit: 'µs/request' },
  { query: 'p99', figure: 'p99_us', label: 'p99 latency', unit: 'µs' },
];

export function seriesFigure(query) {
  return SERIES_FIGURES.find((f) => f.query === query) ?? SERIES_FIGURES[0];
}

// A line's (or a change's) name: "on srv-1: json · 64 connections · app".
export function lineLabel(line) {
  const where = line.pair ? `on ${line.pair}: ` : '';
  return `${where}${line.scenario} · ${levelLabel(line.load_level)} · ${line.target}`;
}

export const lineKey = (x) => [x.pair ?? '', x.scenario, x.load_level, x.target].join('\u0000');

// The line's points aligned on the series' campaigns, oldest first: a point or null per campaign.
export function alignedPoints(doc, line) {
  const byId = new Map((line.points ?? []).map((p) => [p.campaign_id, p]));
  return (doc.campaigns ?? []).map((c) => byId.get(c.id) ?? null);
}

// A cell of the series (pair, scenario, load level): "on srv-1: json · 64 connections".
export function cellLabelOf(line) {
  const where = line.pair ? `on ${line.pair}: ` : '';
  return `${where}${line.scenario} · ${levelLabel(line.load_level)}`;
}

export const cellKey = (x) => [x.pair ?? '', x.scenario, x.load_level].join('\u0000');

// The series' lines grouped by cell, one chart each with its targets as lines, in the order of
// each cell's first line: [{key, label, lines}].
export function seriesCells(doc) {
  const cells = new Map();
  for (const line of doc.lines ?? []) {
    const key = cellKey(line);
    if (!cells.has(key)) cells.set(key, { key, label: cellLabelOf(line), lines: [] });
    cells.get(key).lines.push(line);
  }
  return [...cells.values()];
}

// A line's points cut where the gate mode its campaigns were judged in changes (the campaigns'
// `gates_in_force`): each run of consecutive campaigns of one mode is a segment, so that no line
// joins a point of one mode to a point of another. A campaign without a point on the line does
// not cut a segment of its own mode; one of another mode does, point or not. Segments without a
// point are left out. Each: {mode, judged, words, from, to, points}, `points` aligned on the
// series' campaigns with null outside the segment.
export function modeSegments(doc, line) {
  const aligned = alignedPoints(doc, line);
  const campaigns = doc.campaigns ?? [];
  const segments = [];
  let current = null;
  campaigns.forEach((c, i) => {
    const judgement = gateJudgement(c.gates_in_force);
    if (!current || current.mode !== judgement.mode) {
      current = { ...judgement, from: i, to: i, points: campaigns.map(() => null) };
      segments.push(current);
    }
    current.to = i;
    current.points[i] = aligned[i];
  });
  return segments.filter((s) => s.points.some(Boolean));
}

// The datasets of a cell's chart: per target (in the cell's order, `colour` its index) one per
// segment of one gate mode, with its `mode`, `judged` and `words` (gateJudgement). `label` names
// the target, and the mode's words when it was not enforced;
// `legend` is true for the first dataset of each target and mode, so the legend has one entry
// each; `data` the estimates, `whiskers` their intervals, `points` the points themselves.
export function cellDatasets(doc, cell) {
  const out = [];
  cell.lines.forEach((line, colour) => {
    const seen = new Set();
    for (const seg of modeSegments(doc, line)) {
      out.push({
        target: line.target,
        colour,
        mode: seg.mode,
        judged: seg.judged,
        words: seg.words,
        label: seg.judged ? line.target : `${line.target} (${seg.words})`,
        legend: !seen.has(seg.mode),
        from: seg.from,
        to: seg.to,
        points: seg.points,
        data: seg.points.map((p) => (p && isNum(p.estimate) ? p.estimate : null)),
        whiskers: seg.points.map((p) =>
          p && isNum(p.low) && isNum(p.high) ? { min: p.low, max: p.high } : null,
        ),
      });
      seen.add(seg.mode);
    }
  });
  return out;
}

// The changes of a cell's lines, in campaign order.
export function changesOfCell(doc, cell) {
  return cell.lines
    .flatMap((line) => changesOfLine(doc, line))
    .sort((a, b) => (changePosition(doc, a) ?? 0) - (changePosition(doc, b) ?? 0));
}

// Where a change is drawn on the campaign axis: half-way between its last campaign before and
// its first campaign after (adjacent on the line, though campaigns without a point may lie
// between). null when either is not in the series.
export function changePosition(doc, change) {
  const names = (doc.campaigns ?? []).map((c) => c.name);
  const before = names.indexOf(change.before);
  const after = names.indexOf(change.after);
  if (before < 0 || after < 0) return null;
  return (before + after) / 2;
}

// A ratio after / before as a signed percentage: 0.901 → "−9.9%", 1.05 → "+5.0%".
export function fmtChange(ratio) {
  if (!isNum(ratio)) return '–';
  const pct = (ratio - 1) * 100;
  return `${pct < 0 ? '−' : '+'}${Math.abs(pct).toFixed(1)}%`;
}

// "−9.9% [−11.0%, −8.8%]": the size with its interval.
export function changeSize(change) {
  const s = change.size ?? {};
  const interval =
    isNum(s.low) && isNum(s.high) ? ` [${fmtChange(s.low)}, ${fmtChange(s.high)}]` : '';
  return `${fmtChange(s.estimate)}${interval}`;
}

// How each status is drawn, so that none is told by colour alone: the marker's colour and dash
// on the chart, and the word. Suspected: found in the history, not re-measured; measuring: being
// re-measured; confirmed: the re-measurement showed it; false alarm: it did not; undecided,
// unconfirmed (undecided at the round limit) and not measured: no answer. Any other status is drawn as an unknown one, with its own word.
const STATUS_STYLE = {
  suspected: { colour: '#E69F00', dash: [6, 4], width: 2 },
  measuring: { colour: '#56B4E9', dash: [6, 4], width: 2 },
  confirmed: { colour: '#D55E00', dash: [], width: 2.5 },
  'false alarm': { colour: '#8a949e', dash: [2, 4], width: 1 },
  undecided: { colour: '#5b6670', dash: [6, 4], width: 1.5 },
  unconfirmed: { colour: '#5b6670', dash: [6, 4], width: 1.5 },
  'not measured': { colour: '#5b6670', dash: [6, 4], width: 1.5 },
};
const OTHER_STATUS = { colour: '#5b6670', dash: [3, 3], width: 1.5 };

export function statusStyle(status) {
  return STATUS_STYLE[status] ?? OTHER_STATUS;
}

// The marker of a change on its cell's chart: "regression −9.9% [−11.0%, −8.8%] · suspected",
// after "app: " when `withTarget` (a chart of several targets).
export function changeMarker(doc, change, withTarget = false) {
  const value = changePosition(doc, change);
  if (value === null) return null;
  const style = statusStyle(change.status);
  const who = withTarget ? `${change.target}: ` : '';
  return {
    value,
    label: `${who}${change.direction} ${changeSize(change)} · ${change.status ?? 'no status'}`,
    colour: style.colour,
    dash: style.dash,
    width: style.width,
  };
}

// The changes of one line, in campaign order.
export function changesOfLine(doc, line) {
  const key = lineKey(line);
  return (doc.changes ?? [])
    .filter((c) => lineKey(c) === key)
    .sort((a, b) => (changePosition(doc, a) ?? 0) - (changePosition(doc, b) ?? 0));
}

// What re-measuring a change showed, in words: "+20.1% [+18.0%, +22.3%] new / old, 7 rounds",
// why it could not be measured, or null when it was not re-measured.
export function remeasuredText(change) {
  const r = change.remeasured;
  if (!r) return null;
  if (!r.campaign) return r.detail || 'not measured';
  const interval =
    isNum(r.low) && isNum(r.high) ? ` [${fmtChange(r.low)}, ${fmtChange(r.high)}]` : '';
  const size = isNum(r.estimate) ? `${fmtChange(r.estimate)}${interval} new / old, ` : '';
  return `${size}${r.rounds} round${r.rounds === 1 ? '' : 's'}`;
}
