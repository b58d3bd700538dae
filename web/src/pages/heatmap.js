// The campaign's heat map: one cell per window, coloured by its newest attempt's verdict, as a
// matrix of targets × (scenario · load level · round); noise windows in rows of their own.

import { h } from '../dom.js';
import { heatmapLayout, cellTitle, VERDICTS } from '../model.js';

export const GLYPH = { valid: '✓', invalid: '!', failed: '✕', skipped: '–', running: '…' };

function cell(entry) {
  const verdict = entry.verdict;
  const attempts = entry.window.attempts?.length ?? 0;
  const cls = ['hm-cell', `v-${verdict}`, entry.running ? 'is-running' : null];
  const inner = [
    h(
      'span',
      { class: 'hm-glyph', 'aria-hidden': 'true' },
      entry.running ? GLYPH.running : (GLYPH[verdict] ?? '?'),
    ),
    attempts > 1
      ? h('span', { class: 'hm-attempts', 'aria-hidden': 'true' }, String(attempts))
      : null,
    h(
      'span',
      { class: 'sr-only' },
      entry.running
        ? entry.attempt
          ? `measuring now (newest stored: ${verdict})`
          : 'measuring now'
        : verdict,
    ),
  ];
  const title = cellTitle(entry);
  if (!entry.attempt) {
    return h(
      'span',
      { class: cls, title, dataset: { verdict: 'running', running: 'true' } },
      inner,
    );
  }
  return h(
    'a',
    {
      class: cls,
      href: `#/windows/${entry.attempt.id}`,
      title,
      'aria-label': title.split('\n').slice(0, 2).join(', '),
      dataset: {
        windowId: entry.attempt.id,
        verdict,
        attempts,
        running: entry.running ? 'true' : null,
      },
    },
    inner,
  );
}

export function legend() {
  return h(
    'ul',
    { class: 'legend', 'aria-label': 'Verdicts' },
    VERDICTS.map((v) =>
      h(
        'li',
        null,
        h(
          'span',
          {
            class: ['hm-cell', 'hm-key', `v-${v}`, v === 'running' ? 'is-running' : null],
            'aria-hidden': 'true',
          },
          h('span', { class: 'hm-glyph' }, GLYPH[v]),
        ),
        ' ',
        v,
      ),
    ),
    h('li', { class: 'muted' }, 'a small number: attempts of the window (re-runs)'),
  );
}

export function heatmap(record, progress) {
  const layout = heatmapLayout(record, progress);
  const matrix = h(
    'table',
    { class: 'heatmap', id: 'heatmap-matrix' },
    h(
      'caption',
      { class: 'sr-only' },
      'Windows by target (rows) and scenario, load level and round (columns)',
    ),
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        h('th', { rowspan: '2', scope: 'col', class: 'hm-corner' }, 'target'),
        layout.groups.map((g) =>
          h(
            'th',
            { colspan: String(layout.rounds), scope: 'colgroup', class: 'hm-group' },
            g.label,
          ),
        ),
      ),
      h(
        'tr',
        null,
        layout.columns.map((c) =>
          h(
            'th',
            {
              scope: 'col',
              class: ['hm-round', c.round === 1 ? 'hm-first' : null],
              title: `round ${c.round}`,
            },
            `r${c.round}`,
          ),
        ),
      ),
    ),
    h(
      'tbody',
      null,
      layout.rows.map((row) =>
        h(
          'tr',
          { dataset: { row: row.label } },
          h(
            'th',
            { scope: 'row', class: 'hm-label' },
            row.label,
            row.baseline ? h('span', { class: 'muted' }, ' (baseline)') : null,
          ),
          layout.columns.map((c) =>
            h(
              'td',
              { class: c.round === 1 ? 'hm-first' : null },
              (row.slots.get(c.key) ?? []).map(cell),
            ),
          ),
        ),
      ),
    ),
  );
  const noise =
    layout.noiseRows.length === 0
      ? null
      : h(
          'table',
          { class: 'heatmap heatmap-noise', id: 'heatmap-noise' },
          h('caption', { class: 'sr-only' }, 'Noise windows'),
          h(
            'tbody',
            null,
            layout.noiseRows.map((row) =>
              h(
                'tr',
                { dataset: { row: row.label } },
                h('th', { scope: 'row', class: 'hm-label' }, row.label),
                row.entries.map((e, i) => h('td', { title: `noise window ${i + 1}` }, cell(e))),
              ),
            ),
          ),
        );
  return h(
    'div',
    { id: 'heatmap', dataset: { cells: layout.count } },
    layout.count === 0
      ? h('p', { class: 'muted', id: 'heatmap-empty' }, 'No window measured yet.')
      : h('div', { class: 'heatmap-scroll' }, layout.rows.length ? matrix : null, noise),
    legend(),
  );
}
