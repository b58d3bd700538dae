// Numbers, durations and names as the page shows them: pure functions, the same words and units
// as `benchlab report` (µs/ms/s, "×" ratios, "round 1 · nginx · hello · c8").

const intFmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export const isNum = (v) => typeof v === 'number' && Number.isFinite(v);

export function fmtInt(v) {
  return isNum(v) ? intFmt.format(v) : '–';
}

// 3 significant digits for small figures, whole numbers for large ones.
export function fmtNum(v, digits = 3) {
  if (!isNum(v)) return '–';
  if (Math.abs(v) >= 1000) return intFmt.format(v);
  if (v === 0) return '0';
  return new Intl.NumberFormat('en-US', { maximumSignificantDigits: digits }).format(v);
}

export function fmtFixed(v, decimals = 2) {
  return isNum(v) ? v.toFixed(decimals) : '–';
}

// A latency in microseconds: "58 µs", "1.21 ms", "3.50 s".
export function fmtUs(us) {
  if (!isNum(us)) return '–';
  if (us < 1000) return `${fmtNum(us)} µs`;
  if (us < 1e6) return `${(us / 1000).toFixed(us < 1e4 ? 2 : 1)} ms`;
  return `${(us / 1e6).toFixed(2)} s`;
}

export function fmtMs(ms) {
  return isNum(ms) ? fmtUs(ms * 1000) : '–';
}

export function fmtRatio(r) {
  return isNum(r) ? `${r.toFixed(2)}×` : '–';
}

export function fmtRange(lo, hi) {
  return isNum(lo) && isNum(hi) ? `${lo.toFixed(2)}–${hi.toFixed(2)}` : '–';
}

export function fmtPct(v, decimals = 1) {
  return isNum(v) ? `${v.toFixed(decimals)}%` : '–';
}

// A confidence or a margin (fractions) as the report writes them: 0.95 → "95%", 0.975 → "97.5%",
// 0.02 → "2%", 0.025 → "2.5%".
export function fmtShare(f) {
  return isNum(f) ? `${Number((f * 100).toFixed(2))}%` : '–';
}

// A ratio's interval: "95% CI 1.03–1.08" (the ends to two decimals, as the report's tables).
export function fmtInterval(low, high, confidence) {
  return `${fmtShare(confidence)} CI ${fmtRange(low, high)}`;
}

export function fmtKb(kb) {
  if (!isNum(kb)) return '–';
  if (kb < 1024) return `${fmtNum(kb)} KiB`;
  if (kb < 1024 * 1024) return `${(kb / 1024).toFixed(1)} MiB`;
  return `${(kb / 1024 / 1024).toFixed(2)} GiB`;
}

// A duration in milliseconds for a person: "420 ms", "3.2 s", "5 min 3 s", "2 h 5 min".
export function fmtAge(ms) {
  if (!isNum(ms)) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
}

// Stored timestamps are ISO 8601 UTC; shown as "2026-11-30 08:38:42 UTC".
export function fmtTime(iso) {
  if (!iso) return '–';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

// "c8" → "8 connections", "r5000" → "5,000 req/s (open loop)".
export function levelLabel(level) {
  const m = /^([cr])(\d+(?:\.\d+)?)$/.exec(level ?? '');
  if (!m) return String(level ?? '');
  const n = Number(m[2]);
  return m[1] === 'c'
    ? `${fmtInt(n)} connection${n === 1 ? '' : 's'}`
    : `${fmtNum(n)} req/s open loop`;
}

export function cellLabel(cell) {
  const where = cell.pair ? `${cell.pair}: ` : '';
  return `${where}${cell.scenario} · ${levelLabel(cell.load_level)}`;
}

export function shortCellLabel(cell) {
  return `${cell.pair ? `${cell.pair}: ` : ''}${cell.scenario} · ${cell.load_level}`;
}

// The window's name as the report writes it: "round 1 · nginx · hello · c8" or
// "noise 2 · nginx · hello · c8"; with the pair first in a fleet campaign.
export function windowName(w) {
  const head = w.noise ? `noise ${w.position + 1}` : `round ${w.round}`;
  return [w.pair || null, head, w.target, w.scenario, w.load_level].filter(Boolean).join(' · ');
}
