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
