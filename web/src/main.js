// The dashboard: a hash router over four pages (docs/api.md). Each page is mounted into <main>
// and returns a handle whose destroy() stops its polling and charts when the route changes.

import './style.css';
import { h, replace } from './dom.js';
import { applyTheme } from './charts.js';
import { campaignsPage } from './pages/campaigns.js';
import { campaignPage } from './pages/campaign.js';
import { windowPage } from './pages/window.js';
import { agentsPage } from './pages/agents.js';
import { errorBox } from './ui.js';

const routes = [
  { pattern: /^#?\/?$/, nav: 'campaigns', mount: (el) => campaignsPage(el) },
  { pattern: /^#\/campaigns\/?$/, nav: 'campaigns', mount: (el) => campaignsPage(el) },
  {
    pattern: /^#\/campaigns\/([^/]+)$/,
    nav: 'campaigns',
    mount: (el, m) => campaignPage(el, decodeURIComponent(m[1])),
  },
  {
    pattern: /^#\/windows\/(\d+)$/,
    nav: 'campaigns',
    mount: (el, m) => windowPage(el, Number(m[1])),
  },
  { pattern: /^#\/agents\/?$/, nav: 'agents', mount: (el) => agentsPage(el) },
];

let current = null;

function route() {
  const main = document.getElementById('main');
  if (current && current.destroy) current.destroy();
  current = null;
  const hash = window.location.hash || '#/';
  for (const r of routes) {
    const m = r.pattern.exec(hash);
    if (!m) continue;
    for (const link of document.querySelectorAll('[data-nav]')) {
      if (link.dataset.nav === r.nav) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    replace(main);
    main.dataset.page = r.nav;
    current = r.mount(main, m);
    main.focus({ preventScroll: true });
    window.scrollTo(0, 0);
    return;
  }
  main.dataset.page = 'not-found';
  replace(
    main,
    h('h1', null, 'Not found'),
    errorBox({ message: `no page at ${hash}` }, 'Unknown address'),
    h('p', null, h('a', { href: '#/' }, 'Back to the campaigns')),
  );
}

function shell() {
  const body = document.body;
  replace(
    body,
    h(
      'a',
      {
        class: 'skip',
        href: '#main',
        onclick: (e) => {
          e.preventDefault();
          document.getElementById('main').focus();
        },
      },
      'Skip to content',
    ),
    h(
      'header',
      { class: 'top' },
      h(
        'div',
        { class: 'top-inner' },
        h(
          'a',
          { class: 'brand', href: '#/' },
          h('span', { class: 'brand-mark', 'aria-hidden': 'true' }, '▮▮▯'),
          'benchlab',
        ),
        h(
          'nav',
          { 'aria-label': 'Sections' },
          h('a', { href: '#/', dataset: { nav: 'campaigns' } }, 'Campaigns'),
          h('a', { href: '#/agents', dataset: { nav: 'agents' } }, 'Agents'),
        ),
      ),
    ),
    h('main', { id: 'main', tabindex: '-1' }),
    h(
      'footer',
      { class: 'bottom' },
      h('span', null, 'benchlab coordinator · '),
      h('a', { href: '/api/v1/campaigns' }, 'JSON API'),
      h('span', null, ' (docs/api.md)'),
    ),
  );
}

shell();
applyTheme();
window.addEventListener('hashchange', route);
route();
