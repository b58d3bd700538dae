// The dashboard: a hash router over its pages (docs/api.md). Each page is mounted into <main>
// and returns a handle whose destroy() stops its polling and charts when the route changes.

import './style.css';
import { h, replace } from './dom.js';
import { applyTheme } from './charts.js';
import { campaignsPage } from './pages/campaigns.js';
import { campaignPage } from './pages/campaign.js';
import { windowPage } from './pages/window.js';
import { seriesPage } from './pages/series.js';
import { agentsPage } from './pages/agents.js';
import { bisectionsPage, bisectionPage } from './pages/bisections.js';
import { loginPage } from './pages/login.js';
import { errorBox } from './ui.js';
import { logOut, needsLogIn, onSessionChange, refreshSession, session } from './session.js';

const routes = [
  { pattern: /^#?\/?$/, nav: 'campaigns', mount: (el) => campaignsPage(el) },
  { pattern: /^#\/campaigns\/?$/, nav: 'campaigns', mount: (el) => campaignsPage(el) },
  {
    pattern: /^#\/campaigns\/([^/?]+)(?:\?(.*))?$/,
    nav: 'campaigns',
    mount: (el, m) =>
      campaignPage(
        el,
        decodeURIComponent(m[1]),
        Object.fromEntries(new URLSearchParams(m[2] ?? '')),
      ),
  },
  {
    pattern: /^#\/series\/([^/?]+)(?:\?figure=([a-z0-9_]+))?$/,
    nav: 'campaigns',
    mount: (el, m) => seriesPage(el, decodeURIComponent(m[1]), m[2] ?? 'rps'),
  },
  {
    pattern: /^#\/windows\/(\d+)$/,
    nav: 'campaigns',
    mount: (el, m) => windowPage(el, Number(m[1])),
  },
  { pattern: /^#\/bisections\/?$/, nav: 'bisections', mount: (el) => bisectionsPage(el) },
  {
    pattern: /^#\/bisections\/(\d{1,18})$/,
    nav: 'bisections',
    mount: (el, m) => bisectionPage(el, m[1]),
  },
  { pattern: /^#\/agents\/?$/, nav: 'agents', mount: (el) => agentsPage(el) },
  { pattern: /^#\/login$/, nav: 'login', mount: (el) => loginPage(el, afterLogIn) },
];

let current = null;
let afterLogIn = '#/';

function route() {
  const main = document.getElementById('main');
  if (current && current.destroy) current.destroy();
  current = null;
  const hash = window.location.hash || '#/';
  if (needsLogIn() && hash !== '#/login') {
    afterLogIn = hash;
    window.location.hash = '#/login';
    return;
  }
  for (const r of routes) {
    const m = r.pattern.exec(hash);
    if (!m) continue;
    for (const link of document.querySelectorAll('[data-nav]')) {
      if (link.dataset.nav === r.nav) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    // Each page gets an element of its own: a page left while it still loads renders into its
    // own, detached element, never over the next page.
    const view = h('div', { class: 'page' });
    replace(main, view);
    main.dataset.page = r.nav;
    current = r.mount(view, m);
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
          h('a', { href: '#/bisections', dataset: { nav: 'bisections' } }, 'Bisections'),
          h('a', { href: '#/agents', dataset: { nav: 'agents' } }, 'Agents'),
        ),
        h('div', { id: 'who', class: 'who' }),
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

// Who is logged in, in the header: a name and role with "Log out", or "Log in".
function who(s) {
  const el = document.getElementById('who');
  if (!el) return;
  el.dataset.role = s.role ?? '';
  if (s.role) {
    replace(
      el,
      h('span', { id: 'who-name' }, `${s.name} (${s.role})`),
      h(
        'button',
        {
          type: 'button',
          id: 'logout',
          class: 'link-button',
          onclick: async () => {
            await logOut();
            route();
          },
        },
        'Log out',
      ),
    );
  } else {
    replace(el, h('a', { id: 'login-link', href: '#/login' }, 'Log in'));
  }
}

shell();
applyTheme();
onSessionChange(who);
window.addEventListener('hashchange', route);
// A call refused for want of a valid session: ask who we are, and log in if that is needed.
window.addEventListener('benchlab:unauthorized', async () => {
  const hash = window.location.hash || '#/';
  await refreshSession().catch(() => {});
  if (!session().role && hash !== '#/login') {
    afterLogIn = hash;
    window.location.hash = '#/login';
  }
});
refreshSession()
  .catch(() => {})
  .finally(route);
