// #/ : every campaign of the coordinator, newest first, with its windows' verdicts. Polls while
// one of them is queued or running.

import { h, replace, table, badge } from '../dom.js';
import { api } from '../api.js';
import { fmtTime, fmtInt } from '../format.js';
import { errorBox, loading, Poller } from '../ui.js';
import { gateJudgement, validCountText } from '../model.js';

function progressBar(done, total) {
  const pct = total > 0 ? Math.min(100, (100 * done) / total) : 0;
  return h(
    'span',
    {
      class: 'meter',
      role: 'progressbar',
      'aria-valuemin': '0',
      'aria-valuemax': String(total),
      'aria-valuenow': String(done),
      title: `${done} of ${total} windows stored`,
    },
    h('span', { class: 'meter-fill', style: { width: `${pct}%` } }),
  );
}

function count(n, kind) {
  return n
    ? h('span', { class: `count count-${kind}` }, fmtInt(n))
    : h('span', { class: 'count count-zero' }, '0');
}

// The valid windows, or for a campaign its gates did not judge (warn mode, or a mode not known)
// the windows counted in amber with the reason, never as valid.
function validCell(c) {
  const j = gateJudgement(c.gates_in_force);
  if (j.judged) return count(c.valid, 'valid');
  return h(
    'span',
    {
      class: 'count count-unjudged',
      dataset: { judged: 'false', gates: j.mode },
      title:
        j.mode === 'warn'
          ? 'The gates only warned: windows they would refuse count as valid.'
          : 'The gate mode of this campaign is not known: its windows cannot be said to be valid.',
    },
    validCountText(c.valid, c.gates_in_force),
  );
}

function render(el, list) {
  const campaigns = list.campaigns ?? [];
  const body =
    campaigns.length === 0
      ? h(
          'div',
          { class: 'empty', id: 'no-campaigns' },
          h('p', null, 'No campaigns yet.'),
          h(
            'p',
            null,
            'Submit one with ',
            h('code', null, 'benchlab submit CAMPAIGN.toml --coordinator HOST:PORT'),
            ' (docs/campaign.md); it appears here as soon as the coordinator has it.',
          ),
        )
      : table(
          [
            {
              label: 'Campaign',
              get: (c) =>
                h(
                  'a',
                  {
                    href: `#/campaigns/${encodeURIComponent(c.name)}`,
                    class: 'strong',
                    dataset: { campaignLink: c.name },
                  },
                  c.name,
                ),
            },
            {
              label: 'State',
              get: (c) =>
                h(
                  'span',
                  null,
                  badge(c.state),
                  c.running ? h('span', { class: 'muted' }, ` · ${c.running} measuring`) : null,
                ),
            },
            { label: 'Baseline', get: (c) => c.baseline ?? h('span', { class: 'muted' }, 'none') },
            { label: 'Submitted', cls: 'nowrap', get: (c) => fmtTime(c.created_at) },
            {
              label: 'Finished',
              cls: 'nowrap',
              get: (c) =>
                c.finished_at ? fmtTime(c.finished_at) : h('span', { class: 'muted' }, '–'),
            },
            {
              label: 'Windows',
              cls: 'num nowrap',
              title: 'windows stored / planned',
              get: (c) =>
                h(
                  'span',
                  null,
                  progressBar(c.windows, c.total_windows),
                  ` ${fmtInt(c.windows)}/${fmtInt(c.total_windows)}`,
                ),
            },
            { label: 'Valid', cls: 'num', get: validCell },
            { label: 'Invalid', cls: 'num', get: (c) => count(c.invalid, 'invalid') },
            { label: 'Failed', cls: 'num', get: (c) => count(c.failed, 'failed') },
            { label: 'Skipped', cls: 'num', get: (c) => count(c.skipped, 'skipped') },
          ],
          campaigns,
          {
            id: 'campaigns',
            rowAttrs: (c) => ({
              dataset: {
                campaign: c.name,
                state: c.state,
                gates: gateJudgement(c.gates_in_force).mode,
              },
            }),
          },
        );
  const errors = campaigns
    .filter((c) => c.error)
    .map((c) =>
      h(
        'div',
        { class: 'alert alert-error', role: 'alert' },
        h('strong', null, `${c.name} failed: `),
        c.error,
      ),
    );
  replace(
    el,
    h(
      'div',
      { class: 'page-head' },
      h('h1', null, 'Campaigns'),
      h(
        'p',
        { class: 'lede' },
        `${campaigns.length} campaign${campaigns.length === 1 ? '' : 's'} on this coordinator, newest first. Each window's newest attempt is counted; a campaign whose gates only warned has its windows counted, not judged valid.`,
      ),
    ),
    errors,
    body,
  );
}

export function campaignsPage(el) {
  replace(el, h('h1', null, 'Campaigns'), loading('campaigns'));
  let shown = false;
  const status = h('p', { class: 'poll-status', role: 'status' });
  const poller = new Poller(
    3000,
    async () => {
      const list = await api.campaigns();
      render(el, list);
      el.appendChild(status);
      status.textContent = '';
      shown = true;
      const live = (list.campaigns ?? []).some(
        (c) => c.state === 'queued' || c.state === 'running' || c.running > 0,
      );
      poller.ms = live ? 2000 : 5000;
    },
    (err) => {
      if (!shown) {
        replace(
          el,
          h('h1', null, 'Campaigns'),
          errorBox(err, 'Cannot list the campaigns'),
          h('p', { class: 'muted' }, 'Trying again every few seconds.'),
        );
      } else {
        status.textContent = `Updates paused: ${err.message}; retrying…`;
      }
    },
  ).start(true);
  document.title = 'Campaigns · benchlab';
  return { destroy: () => poller.stop() };
}
