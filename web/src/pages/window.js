// #/windows/ID : one attempt of a window: verdict and reasons, key figures, per-second load,
// server CPU, the latency histogram, its CPU profile's flame graph when its campaign was profiled
// (or why there is none), every attempt of the window, and a re-run button when its newest
// attempt is invalid or failed (POST /api/v1/rerun, then polling until the attempt lands).

import { h, replace, table, badge } from '../dom.js';
import { api, ApiError } from '../api.js';
import {
  fmtTime,
  fmtInt,
  fmtNum,
  fmtUs,
  fmtMs,
  fmtPct,
  fmtKb,
  windowName,
  levelLabel,
  isNum,
} from '../format.js';
import { ChartSet, chartBox, PALETTE } from '../charts.js';
import { logBins, loadRates, serviceLines, probeLines, perSecondNote } from '../model.js';
import { session } from '../session.js';
import { errorBox, loading, Poller, figures, section } from '../ui.js';
import { flameGraph } from '../flame.js';

const RERUN_POLL_MS = 1500;

// A window its campaign's gates did not judge (gates in warn mode, or a mode not known) is never
// shown as valid: its badge says "not judged" and the box says why (docs/gates.md).
function unjudged(doc, w) {
  return w.verdict === 'valid' && doc.gates_in_force !== 'enforce';
}

function verdictBadge(doc, w) {
  return unjudged(doc, w) ? badge('not judged', 'unjudged') : badge(w.verdict);
}

function reasonsBox(doc, w) {
  const reasons = w.reasons ?? [];
  if (unjudged(doc, w) && reasons.length === 0) {
    const mode = doc.gates_in_force === 'warn' ? 'gates in warn mode' : 'gate mode unknown';
    return h(
      'div',
      {
        class: 'alert alert-warn',
        id: 'reasons',
        dataset: { verdict: w.verdict, gates: doc.gates_in_force ?? 'unknown' },
      },
      `Not judged (${mode}): its campaign recorded the gates without letting them refuse a window.`,
    );
  }
  if (w.verdict === 'valid' && reasons.length === 0) {
    return h(
      'div',
      { class: 'alert alert-ok', id: 'reasons', dataset: { verdict: w.verdict } },
      'Valid: every gate passed. This window counts if it is the newest attempt.',
    );
  }
  const kind = w.verdict === 'valid' ? 'alert-warn' : 'alert-error';
  const head =
    {
      invalid: 'Invalid: a gate failed, so this window is left out of the figures.',
      failed: 'Failed: the window could not be measured.',
      skipped: 'Skipped: the window was not measured.',
      valid: 'Not judged (gates in warn mode); the gates would have refused it for:',
    }[w.verdict] ?? w.verdict;
  return h(
    'div',
    {
      class: ['alert', kind],
      role: w.verdict === 'valid' ? null : 'alert',
      id: 'reasons',
      dataset: unjudged(doc, w)
        ? { verdict: w.verdict, gates: doc.gates_in_force ?? 'unknown' }
        : { verdict: w.verdict },
    },
    h('strong', null, head),
    reasons.length
      ? h(
          'ul',
          { class: 'reason-list', id: 'reason-list' },
          reasons.map((r) => h('li', { class: 'reason' }, r)),
        )
      : h('p', null, 'No reason was stored.'),
  );
}

function keyFigures(w) {
  const errors = w.errors ?? 0;
  return figures(
    [
      ['req/s', fmtInt(w.rps), 'rps'],
      ['p50', fmtUs(w.p50_us), 'p50'],
      ['p99', fmtUs(w.p99_us), 'p99'],
      ['p99.9', fmtUs(w.p999_us), 'p999'],
      ['max', fmtUs(w.max_us), 'max'],
      ['CPU µs/request', fmtNum(w.cpu_us_per_request), 'cpu_us_per_request'],
      // Only an attempt that ran with side services has these (docs/report.md).
      'services_cpu_s' in w
        ? [
            'services CPU µs/request',
            fmtNum(w.service_cpu_us_per_request),
            'service_cpu_us_per_request',
          ]
        : null,
      'services_cpu_s' in w
        ? ['total CPU µs/request', fmtNum(w.total_cpu_us_per_request), 'total_cpu_us_per_request']
        : null,
      ['req/CPU-s', fmtInt(w.requests_per_cpu_s), 'requests_per_cpu_s'],
      ['errors', h('span', { class: errors ? 'count-invalid' : null }, fmtInt(errors)), 'errors'],
      ['requests', fmtInt(w.requests), 'requests'],
      ['measured', isNum(w.duration_s) ? `${fmtNum(w.duration_s)} s` : '–', 'duration'],
      ['peak RSS', fmtKb(w.rss_peak_kb), 'rss_peak'],
      ['start-up', fmtMs(w.startup_ms), 'startup'],
    ],
    { id: 'key-figures' },
  );
}

function conditions(w) {
  const rows = [
    ['server agent', w.server_agent ?? '–'],
    ['load agent', w.load_agent ?? '–'],
    ['started', fmtTime(w.started_at)],
    ['ended', fmtTime(w.ended_at)],
    [
      'server CPU (target tree)',
      isNum(w.server_cpu_s) ? `${fmtNum(w.server_cpu_s)} s (${w.cpu_accounting ?? '?'})` : '–',
    ],
    [
      'server host busy / foreign / steal',
      `${fmtPct(w.server_busy_pct)} / ${fmtPct(w.server_foreign_cpu_pct)} / ${fmtPct(w.server_steal_pct)}`,
    ],
    [
      'load host busy / foreign / steal',
      `${fmtPct(w.load_busy_pct)} / ${fmtPct(w.load_foreign_cpu_pct)} / ${fmtPct(w.load_steal_pct)}`,
    ],
    ['self-test drift', isNum(w.selftest_drift) ? fmtPct(w.selftest_drift * 100) : '–'],
    ['generator bound', w.generator_bound ? 'yes' : 'no'],
    ['load CPU', isNum(w.load_cpu_s) ? `${fmtNum(w.load_cpu_s)} s` : '–'],
    [
      'status codes',
      w.status_counts
        ? Object.entries(w.status_counts)
            .map(([k, v]) => `${k}: ${fmtInt(v)}`)
            .join(', ') || '–'
        : '–',
    ],
    [
      'top foreign (server host)',
      (w.server_top_foreign ?? []).map((p) => `${p.comm} ${fmtPct(p.cpu_pct)}`).join(', ') || '–',
    ],
    ['target version', w.target_version ?? '–'],
  ];
  return h(
    'dl',
    { class: 'kv', id: 'conditions' },
    rows.map(([k, v]) => h('div', null, h('dt', null, k), h('dd', null, v))),
  );
}

// The attempt's side services and their probes (docs/services.md); nothing for a target that
// ran without services.
function servicesSection(doc) {
  const services = serviceLines(doc);
  const probes = probeLines(doc);
  if (services.length === 0 && probes.length === 0) return null;
  return section(
    'services-section',
    'Side services',
    h(
      'p',
      { class: 'muted small' },
      "Each service's CPU over the measured interval, in a cgroup of its own: apart from the target's, never foreign CPU.",
    ),
    table(
      [
        { label: 'service', get: (s) => h('code', null, s.service) },
        { label: 'CPU', cls: 'num', get: (s) => s.cpu },
        { label: 'per request', cls: 'num', get: (s) => s.per_request },
        { label: 'RSS', cls: 'num', get: (s) => s.rss },
        { label: 'instance', get: (s) => s.started },
        { label: 'reset', cls: 'num', get: (s) => s.reset },
        {
          label: 'state',
          get: (s) => h('span', { class: s.alive ? null : 'count-invalid' }, s.state),
        },
      ],
      services,
      { id: 'services', rowAttrs: (s) => ({ dataset: { service: s.service } }) },
    ),
    probes.length
      ? table(
          [
            { label: 'service', get: (p) => h('code', null, p.service) },
            { label: 'probe', get: (p) => h('code', null, p.probe) },
            { label: 'before', cls: 'num', get: (p) => p.before },
            { label: 'after', cls: 'num', get: (p) => p.after },
            {
              label: 'rise',
              cls: 'num',
              get: (p) => (p.available ? p.delta : h('span', { class: 'muted' }, p.delta)),
            },
            { label: 'why unavailable', get: (p) => p.why || '–' },
          ],
          probes,
          {
            id: 'probes',
            caption: 'Probes, read as the interval began and as it ended',
            rowAttrs: (p) => ({
              dataset: { service: p.service, probe: p.probe, available: String(p.available) },
            }),
          },
        )
      : null,
  );
}

function lineConfig(datasets, xTitle, yTitle, yFormat, xMax) {
  return {
    type: 'line',
    data: { datasets },
    options: {
      parsing: false,
      scales: {
        x: { type: 'linear', min: 0, suggestedMax: xMax, title: { display: true, text: xTitle } },
        y: { beginAtZero: true, title: { display: true, text: yTitle } },
      },
      plugins: {
        tooltip: {
          callbacks: { label: (ctx) => `${ctx.dataset.label}: ${yFormat(ctx.parsed.y)}` },
        },
      },
      elements: { point: { radius: 2 } },
    },
  };
}

function points(samples, key) {
  return samples.filter((s) => isNum(s[key])).map((s) => ({ x: s.t_s, y: s[key] }));
}

// A short window has one or two per-second samples: draw them as large points.
function pointRadius(samples) {
  return samples.length <= 3 ? 5 : 2;
}

function histogramConfig(hist) {
  const data = logBins(hist.buckets, 48).map((b) => ({
    x: Math.sqrt(b.from_us * b.to_us),
    y: b.count,
    b,
  }));
  const p = hist.percentiles ?? {};
  return {
    type: 'bar',
    data: {
      datasets: [
        {
          label: 'requests',
          data,
          backgroundColor: `${PALETTE[0]}aa`,
          borderColor: PALETTE[0],
          borderWidth: 0,
          barPercentage: 1,
          categoryPercentage: 1,
        },
      ],
    },
    options: {
      parsing: false,
      scales: {
        x: {
          type: 'logarithmic',
          title: { display: true, text: 'latency (µs, log scale)' },
          ticks: {
            autoSkip: false,
            maxRotation: 0,
            callback: (v) => (/^[125]0*$/.test(String(v)) ? fmtUs(v) : ''),
          },
        },
        y: { beginAtZero: true, title: { display: true, text: 'requests' } },
      },
      plugins: {
        legend: { display: false },
        markers: {
          list: [
            ['p50', p['50']],
            ['p99', p['99']],
            ['p99.9', p['99.9']],
          ]
            .filter(([, v]) => isNum(v) && v > 0)
            .map(([label, value]) => ({ label: `${label} ${fmtUs(value)}`, value })),
        },
        tooltip: {
          callbacks: {
            title: (items) => {
              const b = items[0].raw.b;
              return `${fmtUs(Math.round(b.from_us))} – ${fmtUs(Math.round(b.to_us))}`;
            },
            label: (ctx) => `${fmtInt(ctx.raw.y)} requests`,
          },
        },
      },
    },
  };
}

// The attempt's CPU profile (docs/profiles.md), from the window document's `profile` row and
// GET /api/v1/campaigns/NAME/profile?window=ID: its flame graph with search and zoom, its samples,
// their rate and the CPU µs per request they share out. An attempt whose profile could not be
// taken says why; one that is not valid says that flame graphs are of valid windows, as
// `benchlab profile` reads them; a window of a campaign never profiled has no section (null).
// Built once per page: the flame graph is kept across the page's redraws.
function windowProfile(doc, id) {
  const p = doc.profile;
  if (!p) return null;
  const title = 'CPU profile';
  if (p.error) {
    return {
      el: section(
        'profile-section',
        title,
        h(
          'div',
          { class: 'alert alert-warn', id: 'profile-error', role: 'status' },
          h('strong', null, 'No profile of this window: '),
          h('span', { class: 'error-message' }, p.error),
        ),
      ),
      destroy: () => {},
    };
  }
  const taken = `${fmtInt(p.samples)} samples at ${fmtInt(p.frequency_hz)} Hz`;
  if (doc.window.verdict !== 'valid') {
    return {
      el: section(
        'profile-section',
        title,
        h(
          'p',
          { id: 'profile-not-valid', class: 'muted' },
          `${taken} were taken; flame graphs are drawn of valid windows only, as benchlab profile reads them.`,
        ),
      ),
      destroy: () => {},
    };
  }
  const flame = flameGraph();
  const facts = h('div', { id: 'profile-figures' }, loading('the profile'));
  const body = h('div', { id: 'profile-body' });
  let gone = false;
  const el = section(
    'profile-section',
    title,
    h(
      'p',
      { class: 'muted small' },
      'Where this window’s CPU went: its call stacks sampled on-CPU over the measured interval, widest frames most samples. Click a frame to zoom, search to highlight.',
    ),
    facts,
    h('div', { class: 'profile-controls' }, flame.searchControl, flame.resetZoom),
    body,
  );
  api
    .profile(doc.campaign, { window: id })
    .then((d) => {
      if (gone) return;
      replace(
        facts,
        figures(
          [
            ['samples', fmtInt(d.samples), 'profile_samples'],
            ['frequency', `${fmtInt(d.frequency_hz)} Hz`, 'profile_frequency'],
            ['CPU µs/request', fmtNum(d.cpu_us_per_request), 'profile_cpu_us_per_request'],
            d.truncated ? ['cut', 'by the profile limits', 'profile_truncated'] : null,
          ],
          { id: 'profile-facts', dataset: { samples: d.samples } },
        ),
      );
      replace(body, flame.details, flame.graph);
      flame.draw(d.tree);
    })
    .catch((err) => {
      if (gone) return;
      replace(facts, h('p', { class: 'muted' }, `${taken}.`));
      replace(body, errorBox(err, 'Cannot load the profile'));
    });
  return {
    el,
    destroy: () => {
      gone = true;
      flame.clear();
    },
  };
}

function attemptsTable(doc, shownId, freshId) {
  return table(
    [
      { label: 'attempt', cls: 'num', get: (a) => String(a.attempt) },
      {
        label: 'id',
        get: (a) =>
          a.id === shownId
            ? h('strong', null, `#${a.id} (shown)`)
            : h('a', { href: `#/windows/${a.id}` }, `#${a.id}`),
      },
      { label: 'verdict', get: (a) => badge(a.verdict) },
      {
        label: 'counts',
        get: (a) =>
          a.newest
            ? h('span', { class: 'newest-mark', dataset: { newest: 'true' } }, '★ newest')
            : h('span', { class: 'muted' }, 'replaced'),
      },
      { label: 'req/s', cls: 'num', get: (a) => fmtInt(a.rps) },
      { label: 'p99', cls: 'num', get: (a) => fmtUs(a.p99_us) },
      { label: 'CPU µs/req', cls: 'num', get: (a) => fmtNum(a.cpu_us_per_request) },
      { label: 'started', cls: 'nowrap', get: (a) => fmtTime(a.started_at) },
      {
        label: 'reasons',
        cls: 'reasons',
        get: (a) =>
          (a.reasons ?? []).length
            ? h(
                'ul',
                { class: 'reason-list' },
                a.reasons.map((r) => h('li', null, r)),
              )
            : '–',
      },
    ],
    doc.attempts ?? [],
    {
      id: 'attempts',
      rowAttrs: (a) => ({
        class: [a.newest ? 'is-newest' : null, a.id === freshId ? 'is-fresh' : null],
        dataset: {
          attemptId: a.id,
          attempt: a.attempt,
          verdict: a.verdict,
          newest: String(Boolean(a.newest)),
        },
      }),
    },
  );
}

export function windowPage(el, id) {
  const charts = new ChartSet();
  let doc = null;
  let rerun = { state: 'idle', message: '', before: 0, freshId: null };
  let poller = null;
  let profile; // undefined until the first render; null for a window not profiled
  document.title = `window ${id} · benchlab`;
  replace(el, h('h1', null, `Window #${id}`), loading('the window'));

  const rerunControls = () => {
    const status = h(
      'p',
      {
        id: 'rerun-status',
        role: 'status',
        class: ['rerun-status', `rerun-${rerun.state}`],
        dataset: { state: rerun.state },
      },
      rerun.message,
    );
    const canRerun = doc.rerunnable && rerun.state !== 'queued' && rerun.state !== 'sending';
    // Only an operator's session may queue a re-run: others are told how to get one.
    const operator = session().can_rerun;
    return h(
      'div',
      { class: 'rerun' },
      doc.rerunnable && !operator
        ? h(
            'p',
            { id: 'rerun-login', class: 'muted' },
            'An operator can re-run this window: ',
            h('a', { href: '#/login' }, 'log in'),
            " with an operator's token.",
          )
        : null,
      operator && (doc.rerunnable || rerun.state === 'queued' || rerun.state === 'sending')
        ? h(
            'button',
            {
              type: 'button',
              id: 'rerun',
              class: 'button',
              disabled: !canRerun,
              onclick: startRerun,
              title: 'Measure this window again as a new attempt; the newest attempt counts',
            },
            'Re-run this window',
          )
        : null,
      status,
    );
  };

  const render = () => {
    const w = doc.window;
    const newest = (doc.attempts ?? []).find((a) => a.newest);
    charts.destroy();
    const load = loadRates(doc.samples?.load, w.duration_s);
    const server = doc.samples?.server ?? [];
    const rps = chartBox('chart-load-rps', 'Requests per second, per second of the window');
    const p99 = chartBox('chart-load-p99', 'p99 latency per second of the window');
    const cpu = chartBox(
      'chart-server-cpu',
      'Server CPU: target process tree, host busy and foreign CPU',
    );
    const hist = chartBox('chart-histogram', 'Latency histogram, log scale', 280);
    const noLoad = load.length === 0;
    // A window of a second or less has one per-second sample: the chart says what it cannot show.
    const note = perSecondNote(load, w.duration_s);
    const shortNote = (chart) =>
      note ? h('p', { class: 'short-window-note', dataset: { chart } }, note) : null;
    if (profile === undefined) profile = windowProfile(doc, id);
    replace(
      el,
      h(
        'div',
        { class: 'page-head' },
        h(
          'p',
          { class: 'crumbs' },
          h('a', { href: '#/' }, 'Campaigns'),
          ' / ',
          h(
            'a',
            { href: `#/campaigns/${encodeURIComponent(doc.campaign)}`, id: 'campaign-link' },
            doc.campaign,
          ),
          ' / ',
        ),
        h('h1', null, h('span', { id: 'window-name' }, windowName(w)), ' ', verdictBadge(doc, w)),
        h(
          'p',
          { class: 'meta' },
          `Window #${w.id} · attempt ${w.attempt} of ${(doc.attempts ?? []).length}`,
          w.newest
            ? ' · the newest: it counts'
            : newest
              ? [
                  ' · replaced by ',
                  h(
                    'a',
                    { href: `#/windows/${newest.id}` },
                    `attempt ${newest.attempt} (#${newest.id}, ${newest.verdict})`,
                  ),
                ]
              : '',
          ` · ${w.target} · ${w.scenario} · ${levelLabel(w.load_level)}`,
          w.noise ? ' · noise window' : ` · round ${w.round}`,
          w.pair ? ` · pair ${w.pair}` : '',
        ),
      ),
      reasonsBox(doc, w),
      rerunControls(),
      section('key', 'Key figures', keyFigures(w)),
      servicesSection(doc),
      section(
        'samples',
        'Over the window',
        h(
          'div',
          { class: 'chart-grid' },
          h(
            'figure',
            { class: 'chart' },
            h('figcaption', null, 'Requests per second (load generator, per second)'),
            shortNote('rps'),
            noLoad ? h('p', { class: 'muted' }, 'No load samples stored.') : rps.box,
          ),
          h(
            'figure',
            { class: 'chart' },
            h('figcaption', null, 'p99 latency per second'),
            shortNote('p99'),
            noLoad ? h('p', { class: 'muted' }, 'No load samples stored.') : p99.box,
          ),
          h(
            'figure',
            { class: 'chart chart-wide' },
            h(
              'figcaption',
              null,
              "Server CPU, % of one core: the target's process tree, the whole host, and other processes (foreign)",
            ),
            server.length ? cpu.box : h('p', { class: 'muted' }, 'No server samples stored.'),
          ),
          h(
            'figure',
            { class: 'chart chart-wide' },
            h('figcaption', null, 'Latency histogram (requests per bucket, log latency axis)'),
            doc.histogram && (doc.histogram.buckets ?? []).length
              ? hist.box
              : h('p', { class: 'muted' }, 'No histogram stored.'),
          ),
        ),
      ),
      profile?.el,
      section(
        'attempts-section',
        'Every attempt of this window',
        attemptsTable(doc, w.id, rerun.freshId),
      ),
      section('conditions-section', 'Conditions', conditions(w)),
    );
    if (!noLoad) {
      charts.add(
        rps.canvas,
        lineConfig(
          [
            {
              label: 'req/s',
              data: points(load, 'rps'),
              borderColor: PALETTE[0],
              backgroundColor: PALETTE[0],
              pointRadius: pointRadius(load),
            },
          ],
          'seconds into the window',
          'req/s',
          fmtInt,
          w.duration_s,
        ),
      );
      charts.add(
        p99.canvas,
        lineConfig(
          [
            {
              label: 'p99',
              data: points(load, 'p99_us'),
              borderColor: PALETTE[5],
              backgroundColor: PALETTE[5],
              pointRadius: pointRadius(load),
            },
          ],
          'seconds into the window',
          'µs',
          fmtUs,
          w.duration_s,
        ),
      );
    }
    if (server.length) {
      charts.add(
        cpu.canvas,
        lineConfig(
          [
            {
              label: 'target CPU %',
              data: points(server, 'cpu_pct'),
              borderColor: PALETTE[0],
              backgroundColor: PALETTE[0],
            },
            {
              label: 'host busy %',
              data: points(server, 'host_busy_pct'),
              borderColor: PALETTE[2],
              backgroundColor: PALETTE[2],
              borderDash: [5, 3],
            },
            {
              label: 'foreign %',
              data: points(server, 'foreign_pct'),
              borderColor: PALETTE[5],
              backgroundColor: PALETTE[5],
            },
            {
              label: 'steal %',
              data: points(server, 'steal_pct'),
              borderColor: PALETTE[3],
              backgroundColor: PALETTE[3],
              hidden: true,
            },
          ],
          'seconds into the window',
          '% of one core',
          (v) => fmtPct(v),
          w.duration_s,
        ),
      );
    }
    if (doc.histogram && (doc.histogram.buckets ?? []).length)
      charts.add(hist.canvas, histogramConfig(doc.histogram));
    document.title = `${windowName(w)} · benchlab`;
  };

  const load = async () => {
    doc = await api.window(id);
    render();
  };

  async function startRerun() {
    if (rerun.state === 'sending' || rerun.state === 'queued') return;
    rerun = {
      state: 'sending',
      message: 'Asking the coordinator…',
      before: (doc.attempts ?? []).length,
      freshId: null,
    };
    render();
    try {
      await api.rerun([id]);
    } catch (err) {
      rerun = { ...rerun, state: 'error', message: `Re-run refused: ${err.message}` };
      render();
      return;
    }
    rerun = {
      ...rerun,
      state: 'queued',
      message: `Queued: attempt ${rerun.before + 1} will be measured when its agents are free; this page shows it when it is stored.`,
    };
    render();
    poller?.stop();
    poller = new Poller(
      RERUN_POLL_MS,
      async () => {
        const next = await api.window(id);
        if ((next.attempts ?? []).length > rerun.before) {
          const fresh = next.attempts[next.attempts.length - 1];
          doc = next;
          rerun = {
            state: 'done',
            before: rerun.before,
            freshId: fresh.id,
            message: `Attempt ${fresh.attempt} stored (#${fresh.id}): ${fresh.verdict}.`,
          };
          render();
          return false;
        }
        doc = next;
        if (rerun.message.startsWith('Queued')) {
          /* keep the message; the page data may have moved on */
        }
        return true;
      },
      (err) => {
        const s = document.getElementById('rerun-status');
        if (s)
          s.textContent = `Queued; cannot check the window just now (${err.message}), retrying…`;
      },
    ).start();
  }

  load().catch((err) => {
    replace(
      el,
      h('h1', null, `Window #${id}`),
      errorBox(
        err,
        err instanceof ApiError && err.status === 404 ? 'No such window' : 'Cannot load the window',
      ),
      h('p', null, h('a', { href: '#/' }, 'Back to the campaigns')),
    );
  });
  return {
    destroy: () => {
      poller?.stop();
      charts.destroy();
      profile?.destroy();
    },
  };
}
