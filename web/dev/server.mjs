// A development server for the dashboard: serves a fresh build of web/ (rebuilt on every page
// load) and the API, either proxied to a real coordinator or imitated from a database.
//
//   node web/dev/server.mjs --api http://127.0.0.1:8080          # a running coordinator
//   node web/dev/server.mjs --db results/hello.db [--bin build/bin/benchlab] [--port 5173]
//
// The imitation (--db) reads the store with `benchlab report --format json` and `sqlite3`; it
// answers every endpoint of docs/api.md, and a re-run adds a copy of the window as a new
// attempt 3 s later, so the page's live paths can be tried. It never writes to the database.
// It is a tool for working on the page, not a coordinator: the real API is tested by
// tests/browser/ against the real one.

import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { readFile, stat, mkdtemp } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildDashboard } from '../build.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => {
    if (a.startsWith('--'))
      acc.push([a.slice(2), all[i + 1] && !all[i + 1].startsWith('--') ? all[i + 1] : true]);
    return acc;
  }, []),
);
const port = Number(args.port ?? 5173);
const bin = resolve(args.bin ?? join(here, '..', '..', 'build', 'bin', 'benchlab'));
const out = await mkdtemp(join(tmpdir(), 'benchlab-web-dev-'));
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    rmSync(out, { recursive: true, force: true });
    process.exit(0);
  });
}
if (!args.api && !args.db) {
  console.error(
    'usage: node web/dev/server.mjs (--api http://HOST:PORT | --db FILE [--bin BENCHLAB]) [--port N]',
  );
  process.exit(2);
}

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

function json(res, status, body) {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify(body));
}

// --- the imitation of the API -------------------------------------------------------------
const db = args.db ? resolve(args.db) : null;
const sim = { reruns: [], added: new Map(), version: 0, nextId: 1e6 }; // added: campaign → [window key, attempt]

function sql(query) {
  const text = execFileSync('sqlite3', ['-readonly', '-json', db, query], { encoding: 'utf8' });
  return text.trim() ? JSON.parse(text) : [];
}

const recordCache = new Map();
async function record(name) {
  const mtime = (await stat(db)).mtimeMs;
  const cached = recordCache.get(name);
  let rec;
  if (cached && cached.mtime === mtime) rec = structuredClone(cached.rec);
  else {
    const text = execFileSync(bin, ['report', name, '--db', db, '--format', 'json'], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
    });
    recordCache.set(name, { mtime, rec: JSON.parse(text) });
    rec = JSON.parse(text);
  }
  for (const { key, attempt } of sim.added.get(name) ?? []) {
    const w = rec.windows.find((x) => windowKey(x) === key);
    for (const a of w.attempts) a.newest = false;
    w.attempts.push(attempt);
  }
  return { rec, mtime };
}

const windowKey = (w) =>
  [w.pair, w.target, w.scenario, w.load_level, w.round, w.position, w.noise].join('|');
const names = () => sql('select name from campaigns order by id desc').map((r) => r.name);

function counts(rec) {
  const c = { windows: 0, valid: 0, invalid: 0, failed: 0, skipped: 0 };
  for (const w of rec.windows) {
    const a = w.attempts.find((x) => x.newest) ?? w.attempts[w.attempts.length - 1];
    c.windows++;
    c[a.verdict]++;
  }
  return c;
}

function running(name, rec) {
  return sim.reruns
    .filter((r) => r.campaign === name)
    .map((r) => {
      const w = rec.windows.find((x) => windowKey(x) === r.key);
      return {
        pair: w.pair,
        target: w.target,
        scenario: w.scenario,
        load_level: w.load_level,
        round: w.round,
        position: w.position,
        noise: w.noise,
        attempt: w.attempts.length + 1,
        server_agent: 'server',
        load_agent: 'load',
        started_at: new Date(r.at).toISOString(),
      };
    });
}

async function find(id) {
  for (const name of names()) {
    const { rec } = await record(name);
    for (const w of rec.windows) {
      const a = w.attempts.find((x) => x.id === id);
      if (a) return { name, rec, w, a };
    }
  }
  return null;
}

// "h1:<clamped>,<min>,<max>,<sum>;<index>:<count>,..." (common/histogram.cc) into buckets.
function histogram(text) {
  if (!text) return null;
  const [, body = ''] = text.split(';');
  const valueOf = (i) => {
    let bucket = (i >> 10) - 1;
    let sub = (i & 1023) + 1024;
    if (bucket < 0) {
      sub -= 1024;
      bucket = 0;
    }
    return [sub * 2 ** bucket, sub * 2 ** bucket + 2 ** bucket - 1];
  };
  const buckets = body
    .split(',')
    .filter(Boolean)
    .map((p) => {
      const [i, n] = p.split(':').map(Number);
      const [from_us, to_us] = valueOf(i);
      return { from_us, to_us, count: n };
    });
  const total = buckets.reduce((s, b) => s + b.count, 0);
  const at = (pct) => {
    let seen = 0;
    for (const b of buckets) {
      seen += b.count;
      if (seen >= (pct / 100) * total) return b.to_us;
    }
    return 0;
  };
  return {
    count: total,
    buckets,
    percentiles: { 50: at(50), 90: at(90), 99: at(99), 99.9: at(99.9), 100: at(100) },
  };
}

async function api(req, res, path) {
  const m = (re) => re.exec(path);
  let hit;
  if (req.method === 'GET' && path === '/api/v1/campaigns') {
    const rows = sql(
      'select id, name, state, baseline, source, created_at, finished_at, total_windows, error from campaigns order by id desc',
    );
    const list = [];
    for (const r of rows) {
      const { rec } = await record(r.name);
      list.push({ ...r, ...counts(rec), running: running(r.name, rec).length });
    }
    return json(res, 200, { campaigns: list });
  }
  if (req.method === 'GET' && (hit = m(/^\/api\/v1\/campaigns\/([^/]+)$/))) {
    const name = decodeURIComponent(hit[1]);
    if (!names().includes(name))
      return json(res, 404, { error: `no campaign "${name}" (campaigns: ${names().join(', ')})` });
    const { rec, mtime } = await record(name);
    const c = counts(rec);
    const run = running(name, rec);
    return json(res, 200, {
      record: rec,
      progress: {
        total: rec.campaign.total_windows,
        done: c.windows,
        valid: c.valid,
        invalid: c.invalid,
        failed: c.failed,
        skipped: c.skipped,
        reruns_pending: run.length,
        running: run,
        version: `${mtime}/${sim.version}`,
      },
    });
  }
  if (req.method === 'GET' && (hit = m(/^\/api\/v1\/campaigns\/([^/]+)\/report$/))) {
    const name = decodeURIComponent(hit[1]);
    const format = new URL(req.url, 'http://x').searchParams.get('format') ?? 'md';
    try {
      const text = execFileSync(bin, ['report', name, '--db', db, '--format', format], {
        encoding: 'utf8',
        maxBuffer: 1 << 28,
      });
      res.writeHead(200, {
        'Content-Type': {
          md: 'text/markdown; charset=utf-8',
          json: 'application/json',
          csv: 'text/csv; charset=utf-8',
        }[format],
      });
      return res.end(text);
    } catch (err) {
      return json(res, 400, { error: String(err.stderr ?? err.message).trim() });
    }
  }
  if (req.method === 'GET' && (hit = m(/^\/api\/v1\/windows\/(\d+)$/))) {
    const found = await find(Number(hit[1]));
    if (!found) return json(res, 404, { error: `no window with id ${hit[1]}` });
    const { w, a } = found;
    const name = {
      pair: w.pair,
      target: w.target,
      scenario: w.scenario,
      load_level: w.load_level,
      connections: w.connections,
      round: w.round,
      position: w.position,
      noise: w.noise,
    };
    const samples =
      a.id < 1e6
        ? sql(
            `select source, t_s, cpu_pct, rss_kb, requests, host_busy_pct, foreign_pct, steal_pct, p99_us from samples where window_id = ${a.id} order by source, t_s`,
          )
        : [];
    // Side services and probes (schema 9; none in an older database or a simulated re-run).
    const hasServices =
      a.id < 1e6 &&
      sql("select name from sqlite_master where type = 'table' and name = 'window_services'")
        .length > 0;
    const services = hasServices
      ? sql(
          `select service, cpu_user_s, cpu_sys_s, rss_mean_kb, rss_peak_kb, cpu_accounting, alive, exit, started, startup_ms, reset_ms from window_services where window_id = ${a.id} order by service`,
        ).map((s) => ({
          ...s,
          cpu_us_per_request:
            a.requests > 0 ? ((s.cpu_user_s + s.cpu_sys_s) * 1e6) / a.requests : null,
          alive: Boolean(s.alive),
          started: Boolean(s.started),
        }))
      : [];
    const probes = hasServices
      ? sql(
          `select service, probe, before, after, delta, unavailable from window_probes where window_id = ${a.id} order by service, probe`,
        )
      : [];
    let prev = 0;
    const newest = w.attempts[w.attempts.length - 1];
    return json(res, 200, {
      campaign: found.name,
      window: { ...name, ...a },
      attempts: w.attempts.map((x) => ({ ...name, ...x })),
      samples: {
        server: samples
          .filter((s) => s.source === 'server')
          .map(({ t_s, cpu_pct, rss_kb, host_busy_pct, foreign_pct, steal_pct }) => ({
            t_s,
            cpu_pct,
            rss_kb,
            host_busy_pct,
            foreign_pct,
            steal_pct,
          })),
        load: samples
          .filter((s) => s.source === 'load')
          .map((s) => {
            const p = s.t_s - prev;
            prev = s.t_s;
            return {
              t_s: s.t_s,
              requests: s.requests,
              rps: p > 0 ? s.requests / p : null,
              p99_us: s.p99_us,
            };
          }),
      },
      histogram: histogram(a.histogram),
      services,
      probes,
      rerunnable: newest.verdict === 'invalid' || newest.verdict === 'failed',
    });
  }
  if (req.method === 'GET' && path === '/api/v1/agents') {
    const hosts = sql(
      'select server_agent as name, server_host as host from windows where server_host is not null group by server_agent union all select load_agent, load_host from windows where load_host is not null group by load_agent',
    );
    return json(res, 200, {
      agents: hosts.map((x, i) => ({
        name: x.name,
        roles: [i === 0 ? 'server' : 'load'],
        address: `127.0.0.1:${40123 + i}`,
        state: sim.reruns.length ? 'busy' : ['ready', 'busy', 'suspect', 'lost'][i % 4],
        lease_age_ms: 420 + i * 1700,
        labels: i ? [] : ['rack=a'],
        catalogue: i === 0 ? ['nginx', 'hello-server'] : [],
        versions: { benchlab: '0.1.0' },
        host: JSON.parse(x.host),
      })),
    });
  }
  if (req.method === 'POST' && path === '/api/v1/rerun') {
    if (!(req.headers['content-type'] ?? '').startsWith('application/json'))
      return json(res, 415, { error: 'Content-Type: expected application/json' });
    let body = '';
    for await (const chunk of req) body += chunk;
    let ids;
    try {
      ids = JSON.parse(body).window_ids;
    } catch {
      return json(res, 400, { error: 'body: expected a JSON object' });
    }
    const campaigns = [];
    for (const id of ids ?? []) {
      const found = await find(id);
      if (!found) return json(res, 404, { error: `no window with id ${id}` });
      const r = { campaign: found.name, key: windowKey(found.w), at: Date.now() };
      sim.reruns.push(r);
      sim.version++;
      campaigns.push(found.name);
      setTimeout(
        () => {
          sim.reruns.splice(sim.reruns.indexOf(r), 1);
          const list = sim.added.get(found.name) ?? [];
          const attempt = {
            ...found.w.attempts[found.w.attempts.length - 1],
            id: sim.nextId++,
            attempt: found.w.attempts.length + 1,
            newest: true,
            verdict: 'valid',
            reasons: [],
            started_at: new Date().toISOString(),
          };
          list.push({ key: r.key, attempt });
          sim.added.set(found.name, list);
          sim.version++;
        },
        Number(args['rerun-delay-ms'] ?? 3000),
      );
    }
    return json(res, 202, { window_ids: ids, campaigns: [...new Set(campaigns)] });
  }
  return json(res, 404, { error: `no such API path: ${req.method} ${path} (docs/api.md)` });
}

// --- the proxy ------------------------------------------------------------------------------
function proxy(req, res) {
  const target = new URL(req.url, args.api);
  const up = http.request(
    target,
    { method: req.method, headers: { ...req.headers, host: target.host } },
    (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    },
  );
  up.on('error', (err) => json(res, 502, { error: `dev proxy: ${err.message}` }));
  req.pipe(up);
}

// --- static files -----------------------------------------------------------------------------
http
  .createServer(async (req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    try {
      if (path.startsWith('/api/')) return args.api ? proxy(req, res) : await api(req, res, path);
      if (path === '/' || path === '/index.html') await buildDashboard(out, { dev: true });
      const file = join(out, path === '/' ? 'index.html' : path);
      if (!file.startsWith(out)) return json(res, 400, { error: 'bad path' });
      const data = await readFile(file);
      res.writeHead(200, {
        'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
        'Cache-Control': 'no-store',
      });
      res.end(data);
    } catch (err) {
      if (err.code === 'ENOENT') return json(res, 404, { error: `not found: ${path}` });
      console.error(err);
      json(res, 500, { error: err.message });
    }
  })
  .listen(port, '127.0.0.1', () => {
    console.log(
      `dashboard (dev) on http://127.0.0.1:${port}/ — ${args.api ? `API proxied to ${args.api}` : `API imitated from ${db}`}`,
    );
  });
