// Pure: the bisection page's logic (GET /api/v1/bisections/ID, docs/api.md). The range a search
// still suspects after each of its steps, the points of its decided commits, and each step's
// figures and campaigns in words. No DOM here: web/test/bisect_model.test.mjs tests it.

// How each decision is drawn: its colour (Okabe–Ito), point shape and badge. Colour is never the
// only signal: every decision has its own shape too.
export const DECISIONS = {
  good: { label: 'good', colour: '#009E73', pointStyle: 'circle' },
  bad: { label: 'bad', colour: '#D55E00', pointStyle: 'triangle' },
  'build failed': { label: 'build failed', colour: '#7d8893', pointStyle: 'crossRot' },
  undecided: { label: 'undecided', colour: '#56B4E9', pointStyle: 'rectRot' },
};

export const decisionStyle = (decision) => DECISIONS[decision] ?? DECISIONS.undecided;

const isPosition = (p, last) => Number.isInteger(p) && p >= 0 && p <= last;

// The range after each step. Positions count commits from the good end (0) to the bad end
// (commits - 1). Step 0 is the start: the whole range. A commit decided good at position p raises
// the low end (the last good commit) to p, one decided bad lowers the high end (the first bad
// commit) to p; a failed build or an undecided commit leaves the range as it was. A step without
// a position (stored before the store kept it) draws no point and leaves the range too, and is
// counted in `unplaced`. A found search ends with low + 1 == high: the culprit is at `high`.
//
// Returns {commits, last, band: [{step, low, high}], points: [{step, position, decision, oid,
// subject}], unplaced, narrowed}: `band` has the start and one entry per step, `points` one per
// step with a position, `narrowed` says whether the range is down to one pair of neighbours.
export function bisectRange(doc) {
  const commits = Number.isInteger(doc?.commits) && doc.commits >= 2 ? doc.commits : 2;
  const last = commits - 1;
  let low = 0;
  let high = last;
  const band = [{ step: 0, low, high }];
  const points = [];
  let unplaced = 0;
  (doc?.steps ?? []).forEach((s, i) => {
    const step = Number.isInteger(s.step) ? s.step : i + 1;
    if (isPosition(s.position, last)) {
      points.push({
        step,
        position: s.position,
        decision: s.decision,
        oid: s.oid,
        subject: s.subject,
      });
      // A range only shrinks: a decision outside what is left (never made by a search that
      // stands) does not widen it again.
      if (s.decision === 'good') low = Math.max(low, s.position);
      else if (s.decision === 'bad') high = Math.min(high, s.position);
    } else {
      unplaced += 1;
    }
    band.push({ step, low, high });
  });
  return { commits, last, band, points, unplaced, narrowed: high - low <= 1 };
}

// The points grouped by decision, in DECISIONS' order (one chart dataset each), leaving out the
// decisions no step had.
export function pointsByDecision(range) {
  const groups = new Map(Object.keys(DECISIONS).map((d) => [d, []]));
  for (const p of range.points) {
    const key = DECISIONS[p.decision] ? p.decision : 'undecided';
    groups.get(key).push(p);
  }
  return [...groups]
    .filter(([, list]) => list.length)
    .map(([decision, list]) => ({
      decision,
      ...decisionStyle(decision),
      points: list,
    }));
}

// What the chart says in words (its accessible name): where the range started and where it is.
export function rangeWords(doc, range) {
  const end = range.band[range.band.length - 1];
  const steps = range.band.length - 1;
  const now =
    steps === 0
      ? 'no commit decided yet'
      : `after ${steps} step${steps === 1 ? '' : 's'} the last good commit is at ${end.low} and the first bad at ${end.high}`;
  return `The range of ${range.commits} commits (positions 0 to ${range.last}) bisected for ${doc?.figure ?? 'the figure'}: ${now}.`;
}

export const shortOid = (oid) => (typeof oid === 'string' ? oid.slice(0, 12) : '');

const four = (v) => (typeof v === 'number' && Number.isFinite(v) ? v.toFixed(4) : null);

// A step's candidate / midpoint estimate with its interval as `benchlab bisect --status` writes
// it: "1.0300 [1.0100, 1.0500]"; "–" for a step without figures (a failed build).
export function estimateText(step) {
  const [e, l, u] = [four(step?.estimate), four(step?.low), four(step?.high)];
  if (e === null) return '–';
  return l !== null && u !== null ? `${e} [${l}, ${u}]` : e;
}

// A step's campaigns as [{id, name}], the name null when the API has none (a campaign no longer
// stored, or a document without `campaign_names`): the page links the named ones.
export function stepCampaigns(step) {
  const ids = step?.campaigns ?? [];
  const names = step?.campaign_names ?? [];
  return ids.map((id, i) => ({ id, name: typeof names[i] === 'string' ? names[i] : null }));
}

export const bisectionHash = (id) => `#/bisections/${encodeURIComponent(id)}`;
