// #/agents : the fleet as the coordinator sees it (GET /api/v1/agents): lease state, roles,
// address, lease age, catalogue, labels, and the host facts each agent reported.

import { h, replace, table, badge } from '../dom.js';
import { api } from '../api.js';
import { fmtAge, fmtKb, isNum } from '../format.js';
import { errorBox, loading, Poller, section } from '../ui.js';

function list(values) {
  return (values ?? []).length
    ? h(
        'span',
        { class: 'tags' },
        values.map((v) => h('span', { class: 'tag' }, String(v))),
      )
    : h('span', { class: 'muted' }, '–');
}

function fact(v, key) {
  if (v === null || v === undefined || v === '') return '–';
  if (key === 'memory_kb' && isNum(v)) return fmtKb(v);
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function render(el, doc) {
  const agents = doc.agents ?? [];
  const counts = {};
  for (const a of agents) counts[a.state] = (counts[a.state] ?? 0) + 1;
  const facts = [...new Set(agents.flatMap((a) => Object.keys(a.host ?? {})))].sort();
  replace(
    el,
    h(
      'div',
      { class: 'page-head' },
      h('h1', null, 'Agents'),
      h(
        'p',
        { class: 'lede' },
        agents.length === 0
          ? 'No agent has registered with this coordinator.'
          : `${agents.length} agent${agents.length === 1 ? '' : 's'}: ${Object.entries(counts)
              .map(([s, n]) => `${n} ${s}`)
              .join(', ')}. `,
        h(
          'span',
          { class: 'muted' },
          'ready: idle and leased · busy: measuring a window · suspect: a heartbeat is late · lost: the lease expired.',
        ),
      ),
    ),
    agents.length === 0
      ? h(
          'div',
          { class: 'empty', id: 'no-agents' },
          h(
            'p',
            null,
            'Start one with ',
            h('code', null, 'benchlab agent --config AGENT.toml'),
            ' (docs/agent.md).',
          ),
        )
      : null,
    agents.length
      ? table(
          [
            { label: 'Agent', get: (a) => h('strong', null, a.name) },
            { label: 'State', get: (a) => badge(a.state) },
            { label: 'Roles', get: (a) => list(a.roles) },
            { label: 'Address', get: (a) => h('code', null, a.address ?? '–') },
            {
              label: 'Lease age',
              cls: 'num nowrap',
              title: 'since the last heartbeat',
              get: (a) => fmtAge(a.lease_age_ms),
            },
            {
              label: 'Catalogue',
              title: 'the targets this agent may start',
              get: (a) => list(a.catalogue),
            },
            { label: 'Labels', get: (a) => list(a.labels) },
            {
              label: 'Target versions',
              title: "each catalogue target's version line, as the agent read it",
              get: (a) => {
                const versions = Object.entries(a.versions ?? {});
                return versions.length
                  ? h(
                      'ul',
                      { class: 'plain-list' },
                      versions.map(([k, v]) => h('li', null, h('strong', null, k), ': ', v)),
                    )
                  : h('span', { class: 'muted' }, '–');
              },
            },
          ],
          agents,
          { id: 'agents', rowAttrs: (a) => ({ dataset: { agent: a.name, state: a.state } }) },
        )
      : null,
    agents.length && facts.length
      ? section(
          'host-facts',
          'Host facts',
          table(
            [
              { label: 'fact', get: (f) => h('code', null, f) },
              ...agents.map((a) => ({ label: a.name, get: (f) => fact(a.host?.[f], f) })),
            ],
            facts,
            { id: 'agent-hosts' },
          ),
        )
      : null,
  );
}

export function agentsPage(el) {
  replace(el, h('h1', null, 'Agents'), loading('the agents'));
  document.title = 'Agents · benchlab';
  let shown = false;
  const status = h('p', { class: 'poll-status', role: 'status' });
  const poller = new Poller(
    2000,
    async () => {
      const doc = await api.agents();
      render(el, doc);
      el.appendChild(status);
      status.textContent = '';
      shown = true;
    },
    (err) => {
      if (!shown)
        replace(el, h('h1', null, 'Agents'), errorBox(err, 'Cannot list the agents'), status);
      status.textContent = `Updates paused: ${err.message}; retrying…`;
    },
  ).start(true);
  return { destroy: () => poller.stop() };
}
