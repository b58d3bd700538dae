// The profiles section's pure logic (no DOM): which targets and cells there are to pick, how a
// frame of a differential flame graph is marked (grown "+", shrunk "−", beyond its colour), and
// the frames that vanished (only in the base). Trees are GET /api/v1/campaigns/NAME/profile and
// /profile-diff's (docs/api.md): {name, value, children} with base, delta and vanished in a diff.

// A frame's change counts as grown or shrunk when it moved by at least this share of the new
// profile's samples (and by a whole sample): smaller moves are sampling noise for the eye.
export const MARK_SHARE = 0.005;

// The campaign's targets (its plan's order) and its cells, each once: {key, scenario,
// load_level, label} with key "SCENARIO/LEVEL", as the API's `cell` parameter takes it.
export function profileChoices(record) {
  const targets = [...new Set(record?.targets ?? [])];
  const seen = new Set();
  const cells = [];
  for (const c of record?.cells ?? []) {
    const key = `${c.scenario}/${c.load_level}`;
    if (seen.has(key)) continue;
    seen.add(key);
    cells.push({
      key,
      scenario: c.scenario,
      load_level: c.load_level,
      label: `${c.scenario} · ${c.load_level}`,
    });
  }
  return { targets, cells, baseline: record?.campaign?.baseline ?? null };
}

// '+' for a frame that grew, '−' for one that shrank or vanished, '' for one that held (within
// MARK_SHARE of `total`, the new profile's samples).
export function changeMark(node, total) {
  if (node?.vanished) return '−';
  const delta = Number(node?.delta ?? 0);
  const threshold = Math.max(1, MARK_SHARE * (total || 0));
  if (delta >= threshold) return '+';
  if (delta <= -threshold) return '−';
  return '';
}

// The label a differential frame shows: its mark, then its name ("+ SpendCpu").
export function diffLabel(node, total) {
  const mark = changeMark(node, total);
  return mark ? `${mark} ${node.name}` : node.name;
}

// The frames only the base has, outermost first-found: a vanished frame whose parent is also
// vanished is part of its parent's entry. [{name, path: [ancestors' names, without the root],
// base}], by base samples, largest first.
export function vanishedFrames(tree) {
  const out = [];
  const walk = (node, path) => {
    for (const child of node.children ?? []) {
      if (child.vanished) out.push({ name: child.name, path, base: Number(child.base ?? 0) });
      else walk(child, [...path, child.name]);
    }
  };
  if (tree) walk(tree, []);
  return out.sort((a, b) => b.base - a.base || a.name.localeCompare(b.name));
}

// The search box's match: the text anywhere in the frame's name, whatever its case; no pattern
// syntax, so "operator()" or "[k]" are searched as typed.
export function frameMatches(name, term) {
  if (!term) return false;
  return String(name ?? '')
    .toLowerCase()
    .includes(String(term).toLowerCase());
}

// The attempts the "Window" choice lists for `target` in the cell keyed `cellKey`
// ("SCENARIO/LEVEL"): every valid attempt whose profile was taken (the API merges those, and only
// those; record.profiles.unprofiled names the valid ones without a profile), by round, then pair,
// then attempt. [{id, round, noise, pair, attempt, label}], the label naming id and round.
export function profileWindows(record, target, cellKey) {
  const unprofiled = new Set((record?.profiles?.unprofiled ?? []).map((u) => u.window_id));
  const out = [];
  for (const w of record?.windows ?? []) {
    if (w.target !== target || `${w.scenario}/${w.load_level}` !== cellKey) continue;
    for (const a of w.attempts ?? []) {
      if (a.verdict !== 'valid' || unprofiled.has(a.id)) continue;
      const where = w.noise ? `noise ${w.position}` : `round ${w.round}`;
      const label = [
        `#${a.id} · ${where}`,
        w.pair ? ` · ${w.pair}` : '',
        a.attempt > 1 ? ` · attempt ${a.attempt}` : '',
      ].join('');
      out.push({
        id: a.id,
        round: w.round,
        noise: Boolean(w.noise),
        position: w.position ?? 0,
        pair: w.pair ?? '',
        attempt: a.attempt,
        label,
      });
    }
  }
  return out.sort(
    (a, b) =>
      Number(a.noise) - Number(b.noise) ||
      a.round - b.round ||
      a.position - b.position ||
      a.pair.localeCompare(b.pair) ||
      a.attempt - b.attempt,
  );
}

// The Profiles section's first choices: {target, cell, compare, window}, from the campaign page's
// hash query ({target, cell, compare, window}, e.g. a series' link to a re-measurement's diff)
// where it names what the campaign has, else the first target that is not the baseline, the
// first cell, no comparison and every window. A window is a comparison's alternative: with both
// asked for, the comparison wins.
export function profileState(record, query = {}) {
  const choices = profileChoices(record);
  const target = choices.targets.includes(query.target)
    ? query.target
    : (choices.targets.find((t) => t !== choices.baseline) ?? choices.targets[0] ?? '');
  const cell = choices.cells.some((c) => c.key === query.cell)
    ? query.cell
    : (choices.cells[0]?.key ?? '');
  const compare =
    choices.targets.includes(query.compare) && query.compare !== target ? query.compare : '';
  const wanted = Number(query.window);
  const window =
    !compare && profileWindows(record, target, cell).some((w) => w.id === wanted)
      ? String(wanted)
      : '';
  return { target, cell, compare, window };
}

// The campaign page's address with its Profiles section preset: `target` against `compare` (or
// alone) in `cell`.
export function profileHash(campaign, { target, compare, cell, window } = {}) {
  const query = new URLSearchParams(
    Object.entries({ target, compare, cell, window }).filter(([, v]) => v),
  ).toString();
  return `#/campaigns/${encodeURIComponent(campaign)}${query ? `?${query}` : ''}`;
}
