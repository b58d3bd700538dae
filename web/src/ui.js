// Pieces every page uses: the error box, a poller that stops with its page, definition lists.

import { h } from './dom.js';

// An error the page could not get past, with the API's own words.
export function errorBox(err, what) {
  const status = err && err.status ? ` (HTTP ${err.status})` : '';
  return h(
    'div',
    { class: 'alert alert-error', role: 'alert', id: 'error', dataset: { error: '' } },
    h('strong', null, what ? `${what}: ` : 'Error: '),
    h('span', { class: 'error-message' }, err?.message ?? String(err)),
    status,
  );
}

export function loading(what) {
  return h('p', { class: 'loading', 'aria-busy': 'true' }, `Loading ${what}…`);
}

// Calls `tick` every `ms` until stopped; a tick never overlaps the previous one. `tick` returns
// false to stop. Errors go to `onError` and polling goes on (the coordinator may be restarting).
export class Poller {
  constructor(ms, tick, onError) {
    this.ms = ms;
    this.tick = tick;
    this.onError = onError;
    this.timer = null;
    this.stopped = false;
  }
  start(now = false) {
    this.stopped = false;
    this.schedule(now ? 0 : this.ms);
    return this;
  }
  schedule(ms) {
    clearTimeout(this.timer);
    this.timer = setTimeout(async () => {
      if (this.stopped) return;
      let more = true;
      try {
        more = (await this.tick()) !== false;
      } catch (err) {
        if (this.onError) this.onError(err);
      }
      if (!this.stopped && more) this.schedule(this.ms);
    }, ms);
  }
  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}

// [[term, value], ...] as a <dl> of key figures.
export function figures(pairs, attrs) {
  return h(
    'dl',
    { class: 'figures', ...attrs },
    pairs
      .filter(Boolean)
      .map(([term, value, key]) =>
        h(
          'div',
          { class: 'figure', dataset: { figure: key ?? term } },
          h('dt', null, term),
          h('dd', null, value),
        ),
      ),
  );
}

export function section(id, title, ...children) {
  return h(
    'section',
    { id, class: 'panel', 'aria-labelledby': `${id}-title` },
    h('h2', { id: `${id}-title` }, title),
    ...children,
  );
}
