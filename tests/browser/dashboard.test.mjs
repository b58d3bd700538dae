// The dashboard in a real browser (Debian's Chromium through playwright-core) against a real
// coordinator, over HTTPS, that has measured a small campaign: the heat map has one cell per
// window, an invalid window opens from its cell with the API's reasons, a wrong token and a
// forged cookie get 401, a viewer's session shows no Re-run, an operator's Re-run stores a new
// attempt that the page shows, the campaign page redraws by itself when the campaign changes,
// every comparison states its interval and the intervals are drawn as error bars against the
// margin band, a campaign whose gates only warned is never shown as valid, a window of one
// per-second sample says what its charts cannot show, a series' page marks and lists its change
// point with its status, never joins points of different gate modes, the campaigns
// and agents pages list what the API lists, a profiled campaign's flame graph draws its frames,
// highlights a search and diffs two targets with the grown frame marked "+", redraws one
// window's profile from its Window choice, a profiled window's page draws that window's flame
// graph, a change confirmed by a profiled re-measurement links to its profile diff, a found
// bisection's page draws its range shrinking to the culprit and lists its steps as the API does,
// no request
// leaves the coordinator's origin, and its Content-Security-Policy refuses nothing the page does.
// Run by dashboard_test.sh, which starts the lab and sets:
//   BENCHLAB_URL        the coordinator's HTTPS address (https://127.0.0.1:PORT)
//   BENCHLAB_VIEWER_TOKEN, BENCHLAB_OPERATOR_TOKEN  dashboard tokens of either role
//   BENCHLAB_SPKI       the SPKI hash of the dashboard's certificate, which Chromium trusts
//   BENCHLAB_CAMPAIGN   the campaign measured
//   BENCHLAB_STATS_CAMPAIGN  a campaign whose windows all count: 3 rounds, an interval per cell
//   BENCHLAB_SERIES     a series of ten campaigns, SERIES-1 .. SERIES-10, with a step in req/s
//   BENCHLAB_SERIES_STEP  the first campaign after the step
//   BENCHLAB_MODES_SERIES  a series of three one-window campaigns: SERIES-1 and SERIES-3 with the
//                       gates in warn mode, SERIES-2 with them enforced
//   BENCHLAB_SERIES_PROFILED  "1" when the series' last campaign, and so its re-measurement, was
//                       profiled (perf present); empty otherwise
//   BENCHLAB_PROF_CAMPAIGN  a profiled campaign: hello-a, and hello-b slowed in SpendCpu (baseline
//                       hello-a, one cell hello/c4); empty when perf is missing
//   BENCHLAB_BISECTION  the id of a found bisection of 16 commits: good at 7, build failed at 11,
//                       bad at 9, bad at 8 (the culprit, whose subject holds markup)
//   BENCHLAB_AGENTS     the agents' names, comma-separated
//   BENCHLAB_CHROMIUM   the browser (/usr/bin/chromium)
//   BENCHLAB_PROFILE    an empty directory for the browser's profile
//   BENCHLAB_ARTIFACTS  where the screenshots go

import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";

const require = createRequire(
  join(process.env.BENCHLAB_WEB_DIR ?? "", "package.json"),
);
const { chromium } = require("playwright-core");

const base = process.env.BENCHLAB_URL;
const campaign = process.env.BENCHLAB_CAMPAIGN;
const statsCampaign = process.env.BENCHLAB_STATS_CAMPAIGN;
const series = process.env.BENCHLAB_SERIES;
const seriesStep = process.env.BENCHLAB_SERIES_STEP;
const modesSeries = process.env.BENCHLAB_MODES_SERIES;
const seriesProfiled = Boolean(process.env.BENCHLAB_SERIES_PROFILED);
const profCampaign = process.env.BENCHLAB_PROF_CAMPAIGN ?? "";
const bisection = process.env.BENCHLAB_BISECTION;
const agents = (process.env.BENCHLAB_AGENTS ?? "").split(",").filter(Boolean);
const artifacts = process.env.BENCHLAB_ARTIFACTS;
const origin = new URL(base).origin;
const viewerToken = process.env.BENCHLAB_VIEWER_TOKEN;
const operatorToken = process.env.BENCHLAB_OPERATOR_TOKEN;

// The API as a script calls it: reads are open on loopback, changes carry the operator's token.
async function api(path, init = {}) {
  const headers = { ...(init.headers ?? {}) };
  if (init.method && init.method !== "GET")
    headers.Authorization = `Bearer ${operatorToken}`;
  const res = await fetch(new URL(path, base), { ...init, headers });
  const body = await res.json();
  assert.ok(res.ok, `${path}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

const newest = (w) =>
  w.attempts.find((a) => a.newest) ?? w.attempts[w.attempts.length - 1];

describe("dashboard", () => {
  let context;
  let page;
  const requests = [];
  const pageErrors = [];
  // What the page's Content-Security-Policy refused: Chromium reports each on the console.
  const refusedByPolicy = [];

  const shot = async (name) => {
    await page.screenshot({
      path: join(artifacts, `${name}.png`),
      fullPage: true,
    });
  };
  const open = async (hash) => {
    await page.goto(`${base}/${hash}`);
  };
  // Logs in through the page's form; resolves once the header names who is logged in.
  const logIn = async (token, role) => {
    await open("#/login");
    await page.locator("#token").fill(token);
    await page.locator("#login").click();
    await page.locator("#who-name").waitFor();
    assert.match(
      await page.locator("#who-name").innerText(),
      new RegExp(`\\(${role}\\)`),
    );
  };
  // A request from the page itself, with its cookies: [status, body].
  const pageFetch = (path, init) =>
    page.evaluate(
      async ([p, i]) => {
        const res = await fetch(p, i);
        return [res.status, await res.text()];
      },
      [path, init ?? {}],
    );

  before(async () => {
    mkdirSync(artifacts, { recursive: true });
    context = await chromium.launchPersistentContext(
      process.env.BENCHLAB_PROFILE,
      {
        executablePath: process.env.BENCHLAB_CHROMIUM ?? "/usr/bin/chromium",
        headless: true,
        args: [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          `--ignore-certificate-errors-spki-list=${process.env.BENCHLAB_SPKI}`,
        ],
        viewport: { width: 1280, height: 900 },
      },
    );
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(30_000);
    context.on("request", (r) => requests.push(r.url()));
    page.on("pageerror", (e) => pageErrors.push(e.message));
    page.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text()))
        refusedByPolicy.push(m.text());
    });
  });

  after(async () => {
    await context?.close();
  });

  it("lists the campaign on the campaigns page", async () => {
    const list = await api("/api/v1/campaigns");
    const entry = list.campaigns.find((c) => c.name === campaign);
    assert.ok(entry, `the API lists ${campaign}`);
    await open("#/");
    const row = page.locator(`#campaigns tr[data-campaign="${campaign}"]`);
    await row.waitFor();
    assert.equal(await row.getAttribute("data-state"), entry.state);
    const text = await row.innerText();
    assert.match(text, new RegExp(`${entry.windows}/${entry.total_windows}`));
    assert.match(text, new RegExp(`\\b${entry.state}\\b`));
    await shot("campaigns");
    await row.locator("a[data-campaign-link]").click();
    await page.waitForURL(`**/#/campaigns/${campaign}`);
  });

  it("never shows a campaign whose gates only warned as valid", async () => {
    const list = await api("/api/v1/campaigns");
    // browser-stats ran with [gates] mode = "warn"; browser with the gates enforced.
    const warned = list.campaigns.find((c) => c.name === statsCampaign);
    const enforced = list.campaigns.find((c) => c.name === campaign);
    assert.equal(warned.gates_in_force, "warn");
    assert.equal(enforced.gates_in_force, "enforce");
    assert.ok(warned.valid > 0, "its windows count as valid in the API");
    await open("#/");
    const row = page.locator(`#campaigns tr[data-campaign="${statsCampaign}"]`);
    await row.waitFor();
    assert.equal(await row.getAttribute("data-gates"), "warn");
    assert.equal(
      await row.locator(".count-valid").count(),
      0,
      "no valid count in green",
    );
    const cell = row.locator(".count-unjudged");
    assert.equal(await cell.getAttribute("data-gates"), "warn");
    assert.equal(
      (await cell.innerText()).trim(),
      `${warned.valid} window${warned.valid === 1 ? "" : "s"}, gates in warn mode: not judged`,
    );
    assert.doesNotMatch(await row.innerText(), /\bvalid\b/);
    // The amber of the unjudged count, not the valid green.
    const colour = await cell.evaluate((e) => getComputedStyle(e).color);
    assert.notEqual(colour, "rgb(0, 105, 75)");
    const judged = page.locator(`#campaigns tr[data-campaign="${campaign}"]`);
    assert.equal(await judged.getAttribute("data-gates"), "enforce");
    assert.equal(await judged.locator(".count-unjudged").count(), 0);

    // The campaign page says so before any figure, and its progress line counts, not validates.
    await open(`#/campaigns/${statsCampaign}`);
    const warning = page.locator("#gates-warning");
    await warning.waitFor();
    assert.equal(await warning.getAttribute("data-gates"), "warn");
    assert.match(
      await warning.innerText(),
      /^Gates in warn mode: not judged\./,
    );
    const progress = page.locator("#progress");
    assert.equal(await progress.getAttribute("data-gates"), "warn");
    const text = await progress.innerText();
    assert.match(text, /gates in warn mode: not judged/);
    assert.doesNotMatch(text, /\d valid/);
    await shot("campaign-warn-mode");
    await open(`#/campaigns/${campaign}`);
    await page.locator("#progress").waitFor();
    assert.equal(await page.locator("#gates-warning").count(), 0);
    assert.match(await page.locator("#progress").innerText(), /\d+ valid/);
  });

  it("says what a per-second chart of a short window cannot show", async () => {
    const { record } = await api(`/api/v1/campaigns/${statsCampaign}`);
    const id = newest(
      record.windows.find((w) => newest(w).verdict === "valid"),
    ).id;
    const doc = await api(`/api/v1/windows/${id}`);
    // 250 ms windows: the load generator's one sample per second.
    assert.equal(doc.samples.load.length, 1);
    assert.ok(doc.samples.server.length > 1, "the server samples at 10 Hz");
    await open(`#/windows/${id}`);
    for (const chart of ["rps", "p99"]) {
      const note = page.locator(`.short-window-note[data-chart="${chart}"]`);
      await note.waitFor();
      assert.match(
        await note.innerText(),
        /^0\.25 s window: the load generator records one sample per second, so this chart has a single point/,
      );
    }
    // The server's 10 Hz samples draw a course: no note there.
    assert.equal(await page.locator(".short-window-note").count(), 2);
    await page.locator("#chart-server-cpu").waitFor();
    // A valid window of a warn-mode campaign is never shown as valid: not judged, and why.
    assert.equal(doc.gates_in_force, "warn");
    const verdict = page.locator("h1 [data-badge]");
    assert.equal(await verdict.getAttribute("data-badge"), "not judged");
    const box = page.locator("#reasons");
    assert.equal(await box.getAttribute("data-gates"), "warn");
    assert.match(await box.innerText(), /^Not judged \(gates in warn mode\)/);
    await shot("window-short");
  });

  it("draws one heat-map cell per window, with its newest verdict", async () => {
    const { record } = await api(`/api/v1/campaigns/${campaign}`);
    await open(`#/campaigns/${campaign}`);
    await page.locator("#heatmap").waitFor();
    const cells = page.locator("#heatmap [data-window-id]");
    assert.equal(
      await cells.count(),
      record.windows.length,
      "one cell per window of record.windows",
    );
    const shown = await cells.evaluateAll((els) =>
      els.map((e) => [Number(e.dataset.windowId), e.dataset.verdict]),
    );
    const expected = record.windows.map((w) => [
      newest(w).id,
      newest(w).verdict,
    ]);
    assert.deepEqual(
      shown.sort((a, b) => a[0] - b[0]),
      expected.sort((a, b) => a[0] - b[0]),
    );
    for (const [id] of expected.slice(0, 3)) {
      assert.ok(
        await page
          .locator(`#heatmap [data-window-id="${id}"]`)
          .getAttribute("title"),
        "cells carry a tooltip",
      );
    }
    // The result in words, the noise floor, the charts and the report links are there.
    assert.match(await page.locator("#summary").innerText(), /vs|baseline/);
    assert.match(
      await page.locator("#noise-floor").innerText(),
      /noise floor/i,
    );
    // Charts of the valid windows' figures, or a note that there is nothing to chart yet.
    const charted = record.cells.some((c) =>
      c.targets.some((t) => Number.isFinite(t.metrics?.rps?.median)),
    );
    for (const id of ["#chart-rps", "#chart-cpu"])
      assert.equal(await page.locator(id).count(), charted ? 1 : 0, id);
    assert.equal(await page.locator("#no-charts").count(), charted ? 0 : 1);
    const md = await page
      .locator('#report-links a[data-format="md"]')
      .getAttribute("href");
    const report = await fetch(new URL(md, base));
    assert.equal(report.status, 200);
    assert.match(
      await page.locator("#progress").innerText(),
      new RegExp(
        `${record.windows.length}/${record.campaign.total_windows} windows`,
      ),
    );
    await shot("campaign");
  });

  it("states every comparison with its interval, and draws the intervals against the margin", async () => {
    const { record } = await api(`/api/v1/campaigns/${statsCampaign}`);
    assert.equal(record.version, 2);
    assert.equal(record.stats.plan, "fixed");
    assert.equal(record.stats.max_rounds, 3);
    const conf = `${Math.round(record.stats.confidence * 100)}%`;
    await open(`#/campaigns/${statsCampaign}`);
    await page.locator("#intervals").waitFor();
    assert.match(
      await page.locator("#plan").innerText(),
      /Fixed plan: 3 rounds; 95% confidence\. Margin ±2%/,
    );

    const metrics = [
      "rps",
      ...(record.stats.decide_on ?? []).filter((m) => m !== "rps"),
    ];
    const ratio = (v) => `${v.toFixed(2)}×`;
    let intervals = 0;
    for (const cell of record.cells) {
      assert.equal(cell.rounds, 3);
      assert.equal(cell.stopped, "fixed plan");
      const box = page.locator(
        `#summary .cell-result[data-cell*="${cell.scenario}"]`,
      );
      assert.equal(
        (await box.locator(".cell-rounds").innerText()).trim(),
        "3 rounds",
      );
      for (const t of cell.targets.filter((x) => !x.baseline)) {
        for (const metric of metrics) {
          const vs = t.metrics[metric].vs_baseline;
          const line = box.locator(
            `li[data-target="${t.target}"][data-metric="${metric}"]`,
          );
          assert.equal(
            await line.getAttribute("data-verdict"),
            vs.verdict,
            `${t.target} ${metric}`,
          );
          const text = await line.innerText();
          assert.ok(
            text.includes(`noise-floor rule: ${vs.noise_rule.verdict}`),
            text,
          );
          if (!vs.interval) {
            // A window failed on this busy machine and left one round: no interval, said so.
            assert.equal(vs.verdict, "n/a");
            assert.match(text, /no interval|not compared/);
            continue;
          }
          const ci = `${conf} CI ${vs.interval.low.toFixed(2)}–${vs.interval.high.toFixed(2)}`;
          assert.ok(
            text.includes(`${ratio(vs.interval.estimate)} hello-server`),
            text,
          );
          assert.ok(text.includes(ci), `${text} states ${ci}`);
          if (vs.rounds_needed)
            assert.ok(text.includes(`(~${vs.rounds_needed} rounds)`), text);
          intervals++;
        }
      }
    }
    assert.ok(
      intervals > 0,
      "an interval to check: a cell with 2 valid rounds of both targets",
    );

    // The chart of each figure, and its table with the same numbers.
    for (const metric of metrics) {
      const expected = record.cells.flatMap((c) =>
        c.targets.filter((t) => !t.baseline).map((t) => t),
      );
      if (!expected.some((t) => t.metrics[metric].vs_baseline.interval))
        continue;
      const canvas = page.locator(`#chart-ratio-${metric}`);
      await canvas.waitFor();
      const rows = page.locator(`#interval-table-${metric} tbody tr`);
      assert.equal(await rows.count(), expected.length);
      for (const [i, t] of expected.entries()) {
        const vs = t.metrics[metric].vs_baseline;
        const cells = await rows.nth(i).locator("td").allInnerTexts();
        assert.equal(cells[1], t.target);
        assert.equal(
          await rows.nth(i).getAttribute("data-verdict"),
          vs.verdict,
        );
        if (!vs.interval) continue;
        assert.equal(cells[2], `${vs.interval.estimate.toFixed(3)}×`);
        assert.equal(cells[3], vs.interval.low.toFixed(3));
        assert.equal(cells[4], vs.interval.high.toFixed(3));
        assert.equal(cells[5], String(vs.interval.n));
      }
      // Drawn: the error bars in the target's colour (hello-twin, the second target: Okabe–Ito
      // orange #E69F00) and the margin band's translucent grey.
      const drawn = await canvas.evaluate((c) => {
        const { data } = c
          .getContext("2d")
          .getImageData(0, 0, c.width, c.height);
        let bar = 0;
        let band = 0;
        for (let i = 0; i < data.length; i += 4) {
          const [r, g, b, a] = [data[i], data[i + 1], data[i + 2], data[i + 3]];
          if (
            a > 200 &&
            Math.abs(r - 0xe6) < 12 &&
            Math.abs(g - 0x9f) < 12 &&
            b < 30
          )
            bar++;
          if (
            a > 0 &&
            a < 90 &&
            Math.abs(r - 120) < 12 &&
            Math.abs(b - 140) < 12
          )
            band++;
        }
        return { bar, band };
      });
      assert.ok(
        drawn.bar > 20,
        `${metric}: error bars drawn (${drawn.bar} pixels)`,
      );
      assert.ok(
        drawn.band > 200,
        `${metric}: the margin band drawn (${drawn.band} pixels)`,
      );
    }
    await page
      .locator("#intervals")
      .screenshot({ path: join(artifacts, "campaign-intervals.png") });
    await shot("campaign-stats");
  });

  let invalidId;
  it("opens an invalid window from its cell and shows its reasons", async () => {
    const { record } = await api(`/api/v1/campaigns/${campaign}`);
    // foreign_cpu (at 1%) makes every window invalid here; a failed one would do as well.
    const notValid = record.windows
      .map(newest)
      .filter((a) => a.verdict === "invalid" || a.verdict === "failed")
      .sort(
        (a, b) =>
          (a.verdict === "invalid" ? 0 : 1) - (b.verdict === "invalid" ? 0 : 1),
      );
    assert.ok(
      notValid.length > 0,
      "the campaign has an invalid window (foreign_cpu on a shared machine)",
    );
    invalidId = notValid[0].id;
    const doc = await api(`/api/v1/windows/${invalidId}`);
    assert.ok(doc.window.reasons.length > 0);

    await open(`#/campaigns/${campaign}`);
    await page.locator(`#heatmap [data-window-id="${invalidId}"]`).click();
    await page.waitForURL(`**/#/windows/${invalidId}`);
    const reasons = page.locator("#reasons");
    await reasons.waitFor();
    assert.equal(
      await reasons.getAttribute("data-verdict"),
      notValid[0].verdict,
    );
    const shown = await page.locator("#reason-list li").allInnerTexts();
    assert.deepEqual(
      shown.map((s) => s.trim()),
      doc.window.reasons,
    );
    // Not logged in: reads are open on loopback, re-runs are not.
    assert.equal(
      await page.locator("#rerun").count(),
      0,
      "no re-run button without a token",
    );
    assert.equal(
      await page.locator("#rerun-login").isVisible(),
      doc.rerunnable,
    );
    assert.equal(await page.locator("#login-link").count(), 1);
    await page.locator("#chart-histogram").waitFor();
    // A campaign never profiled: nothing about profiles on its windows' pages.
    assert.equal(doc.profile, null);
    assert.equal(await page.locator("#profile-section").count(), 0);
    await shot("window-invalid");
  });

  it("refuses a wrong token and a forged cookie with 401", async () => {
    await open("#/login");
    await page.locator("#token").fill(`blt_${"A".repeat(43)}`);
    await page.locator("#login").click();
    const error = page.locator("#login-error");
    await error.waitFor();
    assert.equal(await error.getAttribute("data-status"), "401");
    assert.match(await error.innerText(), /unknown token/);
    assert.equal(
      (await context.cookies(base)).filter((c) => c.name === "benchlab_session")
        .length,
      0,
    );

    await context.addCookies([
      {
        name: "benchlab_session",
        value: "B".repeat(43),
        url: base,
        httpOnly: true,
        secure: true,
        sameSite: "Strict",
      },
    ]);
    const [status, body] = await pageFetch("/api/v1/campaigns");
    assert.equal(status, 401, body);
    const [rerunStatus] = await pageFetch("/api/v1/rerun", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ window_ids: [invalidId] }),
    });
    assert.equal(rerunStatus, 401);
    const res = await fetch(new URL("/api/v1/agents", base), {
      headers: { Cookie: `benchlab_session=${"B".repeat(43)}` },
    });
    assert.equal(res.status, 401);
    await context.clearCookies();
    await shot("login-refused");
  });

  it("logs a viewer in: no re-run button, and a re-run by hand is 403", async () => {
    await logIn(viewerToken, "viewer");
    const [cookie] = (await context.cookies(base)).filter(
      (c) => c.name === "benchlab_session",
    );
    assert.ok(cookie, "a session cookie");
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.secure, true);
    assert.equal(cookie.sameSite, "Strict");
    assert.notEqual(
      cookie.value,
      viewerToken.slice(4),
      "the cookie is not the token",
    );
    assert.equal(
      await page.evaluate(() => document.cookie),
      "",
      "the page cannot read it",
    );

    await open(`#/windows/${invalidId}`);
    await page.locator("#reasons").waitFor();
    assert.equal(
      await page.locator("#rerun").count(),
      0,
      "no re-run button for a viewer",
    );
    await page.locator("#rerun-login").waitFor();
    const before = await api(`/api/v1/windows/${invalidId}`);
    const [status, body] = await pageFetch("/api/v1/rerun", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ window_ids: [invalidId] }),
    });
    assert.equal(status, 403, body);
    const { progress } = await api(`/api/v1/campaigns/${campaign}`);
    assert.equal(progress.reruns_pending ?? 0, 0, "nothing queued");
    assert.equal(
      (await api(`/api/v1/windows/${invalidId}`)).attempts.length,
      before.attempts.length,
    );
    await shot("window-viewer");
    await page.locator("#logout").click();
    await page.locator("#login-link").waitFor();
  });

  it("logs an operator in: the re-run button is there", async () => {
    await logIn(operatorToken, "operator");
    await open(`#/windows/${invalidId}`);
    await page.locator("#reasons").waitFor();
    assert.equal(await page.locator("#rerun").isVisible(), true);
    assert.equal(await page.locator("#rerun-login").count(), 0);
  });

  it("re-runs the window: the new attempt appears in the page and in the API", async () => {
    const before = await api(`/api/v1/windows/${invalidId}`);
    assert.equal(before.rerunnable, true);
    const rows = page.locator("#attempts tbody tr");
    assert.equal(await rows.count(), before.attempts.length);

    await page.locator("#rerun").click();
    await page
      .locator(
        '#rerun-status[data-state="queued"], #rerun-status[data-state="done"]',
      )
      .waitFor();
    await page.waitForFunction(
      (n) => document.querySelectorAll("#attempts tbody tr").length === n,
      before.attempts.length + 1,
      { timeout: 240_000 },
    );
    const after = await api(`/api/v1/windows/${invalidId}`);
    assert.equal(
      after.attempts.length,
      before.attempts.length + 1,
      "the API has one more attempt",
    );
    const fresh = after.attempts[after.attempts.length - 1];
    const newestRow = page.locator('#attempts tbody tr[data-newest="true"]');
    assert.equal(await newestRow.count(), 1);
    assert.equal(
      Number(await newestRow.getAttribute("data-attempt-id")),
      fresh.id,
    );
    assert.equal(
      await page.locator("#rerun-status").getAttribute("data-state"),
      "done",
    );
    await shot("window-rerun");
  });

  it("redraws the campaign page by itself when a window is re-run", async () => {
    const { record } = await api(`/api/v1/campaigns/${campaign}`);
    const measured = record.windows.find(
      (w) => w.attempts.length === 1 && newest(w).verdict !== "valid",
    );
    assert.ok(measured, "a window not valid and measured once");
    const oldId = newest(measured).id;
    await open(`#/campaigns/${campaign}`);
    await page.locator(`#heatmap [data-window-id="${oldId}"]`).waitFor();
    const version = await page
      .locator("#progress")
      .getAttribute("data-version");
    await page.evaluate(() => {
      window.notReloaded = true;
    });

    await api("/api/v1/rerun", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ window_ids: [oldId] }),
    });
    // The cell turns into the new attempt's once it is stored, with no reload of the page.
    await page.waitForFunction(
      (id) => !document.querySelector(`#heatmap [data-window-id="${id}"]`),
      oldId,
      { timeout: 240_000 },
    );
    const doc = await api(`/api/v1/windows/${oldId}`);
    assert.equal(doc.attempts.length, 2);
    const fresh = doc.attempts[1];
    const cell = page.locator(`#heatmap [data-window-id="${fresh.id}"]`);
    await cell.waitFor();
    assert.equal(await cell.getAttribute("data-attempts"), "2");
    assert.equal(await cell.getAttribute("data-verdict"), fresh.verdict);
    assert.notEqual(
      await page.locator("#progress").getAttribute("data-version"),
      version,
    );
    assert.equal(
      await page.locator("#heatmap [data-window-id]").count(),
      record.windows.length,
    );
    assert.equal(
      await page.evaluate(() => window.notReloaded),
      true,
      "the page was not reloaded",
    );
    await shot("campaign-after-rerun");
  });

  it("shows a series with its change point marked and listed with its status", async () => {
    const doc = await api(`/api/v1/series/${series}`);
    assert.equal(doc.figure, "rps");
    assert.equal(doc.campaigns.length, 10);
    const step = doc.changes.find((c) => c.after === seriesStep);
    assert.ok(
      step,
      `the API finds the step at ${seriesStep}: ${JSON.stringify(doc.changes)}`,
    );
    assert.equal(step.direction, "regression");
    // The tenth run re-measured it: the old build against the new, a campaign of its own.
    assert.equal(step.status, "confirmed", JSON.stringify(step));
    assert.equal(step.remeasured.campaign, `${series}-10-remeasure-1`);
    assert.ok(step.remeasured.high < 1, "req/s new / old below 1");

    // The campaign page says where the campaign is in its series and links there.
    await open(`#/campaigns/${series}-3`);
    const link = page.locator("#series-link");
    await link.waitFor();
    assert.equal(
      (await link.innerText()).trim(),
      `series ${series} (campaign 3 of 10)`,
    );
    await link.locator("a").click();
    await page.waitForURL(`**/#/series/${series}`);

    // The table lists every change with its status, as a badge of its own.
    const rows = page.locator("#changes-table tbody tr");
    await rows.first().waitFor();
    assert.equal(await rows.count(), doc.changes.length);
    const row = page.locator(
      `#changes-table tbody tr[data-after="${seriesStep}"]`,
    );
    assert.equal(await row.getAttribute("data-status"), step.status);
    const badge = row.locator(`[data-badge="${step.status}"]`);
    assert.equal((await badge.innerText()).trim(), step.status);
    assert.match(
      await badge.getAttribute("class"),
      new RegExp(`badge-${step.status.replace(/[^a-z0-9-]/gi, "")}`),
    );
    assert.match(
      await row.innerText(),
      new RegExp(`${series}-5\\s*→\\s*${seriesStep}`),
    );
    assert.equal(
      await row.locator(`a[href="#/campaigns/${seriesStep}"]`).count(),
      1,
    );
    // Its re-measurement, with the campaign that measured it linked.
    const again = row.locator(
      `[data-remeasured="${step.remeasured.campaign}"]`,
    );
    assert.match(
      await again.innerText(),
      /^−\d+\.\d% \[−\d+\.\d%, −\d+\.\d%\] new \/ old, \d+ rounds \(/,
    );
    assert.equal(
      await again
        .locator(`a[href="#/campaigns/${step.remeasured.campaign}"]`)
        .count(),
      1,
    );
    // A profiled re-measurement links to its profile diff, the new build against the old (its
    // baseline); an unprofiled one does not.
    const diffLink = again.locator(
      `a[data-profile-diff="${step.remeasured.campaign}"]`,
    );
    if (seriesProfiled) {
      await diffLink.waitFor();
    } else {
      await page.waitForTimeout(1000); // the campaign's run of record has been read by then
      assert.equal(
        await diffLink.count(),
        0,
        "no profile diff of an unprofiled re-measurement",
      );
    }

    // The cell's chart: its one target a line, one point per campaign, the change marked on it,
    // and said in words.
    const figure = page.locator(`.series-cell[data-targets="hello"]`);
    assert.equal(await figure.getAttribute("data-changes"), "1");
    const item = figure.locator(`li[data-change="${series}-5..${seriesStep}"]`);
    assert.equal(await item.getAttribute("data-status"), step.status);
    assert.match(
      await item.innerText(),
      /regression −\d+\.\d% \[−\d+\.\d%, −\d+\.\d%\]/,
    );
    const canvas = figure.locator("canvas");
    assert.equal(await canvas.getAttribute("data-changes"), "1");
    assert.match(
      await canvas.getAttribute("aria-label"),
      new RegExp(`between ${series}-5 and ${seriesStep}, ${step.status}`),
    );
    // A confirmed change is a solid line in Okabe–Ito vermillion (#D55E00), which nothing else
    // on the chart is drawn in; count its pixels.
    const vermillion = await canvas.evaluate((c) => {
      const { data } = c.getContext("2d").getImageData(0, 0, c.width, c.height);
      let n = 0;
      for (let i = 0; i < data.length; i += 4) {
        if (
          data[i + 3] > 200 &&
          Math.abs(data[i] - 0xd5) < 12 &&
          Math.abs(data[i + 1] - 0x5e) < 12 &&
          data[i + 2] < 30
        )
          n++;
      }
      return n;
    });
    assert.ok(vermillion > 50, "the confirmed change point drawn");
    await shot("series");

    if (seriesProfiled) {
      // The link opens the re-measurement's campaign page with the diff drawn: the step's
      // target against the campaign's baseline, the old build, in the change's cell.
      const { record } = await api(
        `/api/v1/campaigns/${step.remeasured.campaign}`,
      );
      assert.ok(record.profiles, "the re-measurement was profiled");
      const oldBuild = record.campaign.baseline;
      assert.notEqual(oldBuild, step.target);
      await diffLink.click();
      await page.waitForURL((u) =>
        u.hash.startsWith(`#/campaigns/${step.remeasured.campaign}?`),
      );
      await page.locator("#profile-legend").waitFor();
      assert.equal(
        await page.locator("#profile-target").inputValue(),
        step.target,
      );
      assert.equal(
        await page.locator("#profile-compare").inputValue(),
        oldBuild,
      );
      assert.equal(
        await page.locator("#profile-cell").inputValue(),
        `${step.scenario}/${step.load_level}`,
      );
      await page.locator("#flamegraph svg g rect").first().waitFor();
      assert.match(
        await page.locator("#profile-summary").innerText(),
        new RegExp(
          `^${step.target} against ${oldBuild} in ${step.scenario}/${step.load_level}: `,
        ),
      );
      await page
        .locator("#profiles")
        .screenshot({
          path: join(artifacts, "series-change-profile-diff.png"),
        });
      await open(`#/series/${series}`);
      await page.locator("#changes-table").waitFor();
    }

    // The y axis starts at 0; fitted to the data, the chart says that it does not.
    assert.equal(await page.locator(".axis-note").count(), 0);
    await page.locator("#series-zoom").check();
    const note = page.locator('.series-cell[data-targets="hello"] .axis-note');
    await note.waitFor();
    assert.match(await note.innerText(), /The y axis does not start at 0/);
    await page.locator("#series-zoom").uncheck();
    await page.locator(".axis-note").waitFor({ state: "detached" });

    // Another figure: CPU per request, from the selector.
    await page.locator("#figure-select").selectOption("cpu");
    await page.waitForURL((u) => u.hash === `#/series/${series}?figure=cpu`);
    await page.locator('[data-figure="cpu_us_per_request"] #changes').waitFor();
    const cpu = await api(`/api/v1/series/${series}?figure=cpu`);
    assert.equal(
      await page.locator("#changes-table tbody tr").count(),
      cpu.changes.length,
    );

    // A series that does not exist: the API's words.
    await open("#/series/no-such-series");
    const error = page.locator("#error");
    await error.waitFor();
    assert.match(await error.innerText(), /no series "no-such-series"/);
  });

  it("never joins series points of different gate modes", async () => {
    const doc = await api(`/api/v1/series/${modesSeries}`);
    const modeOf = Object.fromEntries(
      doc.campaigns.map((c) => [c.name, c.gates_in_force]),
    );
    assert.deepEqual(
      doc.campaigns.map((c) => [c.name, c.gates_in_force]),
      [
        [`${modesSeries}-1`, "warn"],
        [`${modesSeries}-2`, "enforce"],
        [`${modesSeries}-3`, "warn"],
      ],
    );
    for (const p of doc.lines[0].points)
      assert.equal(p.gates_in_force, modeOf[p.campaign]);
    await open(`#/series/${modesSeries}`);
    const canvas = page.locator('.series-cell[data-targets="hello"] canvas');
    await canvas.waitFor();
    const segments = JSON.parse(await canvas.getAttribute("data-segments"));
    // Every line drawn joins campaigns of one gate mode, the one it is drawn as.
    for (const s of segments) {
      assert.ok(s.campaigns.length > 0);
      for (const c of s.campaigns)
        assert.equal(modeOf[c], s.mode, `${c} in a ${s.mode} line`);
    }
    // The warn-mode campaigns on either side of the enforced one are not joined across it,
    // whether or not the enforced one has a valid window.
    const warnLines = segments.filter((s) => s.mode === "warn");
    assert.ok(warnLines.length >= 1, JSON.stringify(segments));
    assert.ok(
      warnLines.every(
        (s) =>
          !(
            s.campaigns.includes(`${modesSeries}-1`) &&
            s.campaigns.includes(`${modesSeries}-3`)
          ),
      ),
      JSON.stringify(segments),
    );
    const points = doc.lines[0].points.map((p) => p.campaign);
    assert.equal(
      segments
        .flatMap((s) => s.campaigns)
        .sort()
        .join(),
      points.sort().join(),
      "every point drawn once",
    );
    // Marked apart, in words: the chart's label, the page's note and each point's row.
    assert.match(
      await canvas.getAttribute("aria-label"),
      /gates in warn mode: not judged/,
    );
    assert.match(
      await page.locator("#series-modes").innerText(),
      /hollow triangles on dashed lines/,
    );
    const rows = page.locator("#points-0 tbody tr");
    for (let i = 0; i < (await rows.count()); i++) {
      const r = rows.nth(i);
      assert.equal(
        await r.getAttribute("data-gates"),
        modeOf[await r.getAttribute("data-campaign")],
      );
    }
    await shot("series-modes");
  });

  it("lists both agents on the agents page", async () => {
    const doc = await api("/api/v1/agents");
    await open("#/agents");
    await page.locator("#agents").waitFor();
    for (const name of agents) {
      const row = page.locator(`#agents tr[data-agent="${name}"]`);
      assert.equal(await row.count(), 1, `agent ${name} shown`);
      const state = doc.agents.find((a) => a.name === name)?.state;
      assert.ok(
        ["ready", "busy", "suspect", "lost"].includes(
          await row.getAttribute("data-state"),
        ),
      );
      assert.ok(state, `the API lists ${name}`);
    }
    await shot("agents");
  });

  it("lists the bisection and draws its range shrinking to the culprit", async () => {
    const list = await api("/api/v1/bisections");
    const doc = await api(`/api/v1/bisections/${bisection}`);
    await open("#/bisections");
    const row = page.locator(`#bisections tr[data-bisection="${bisection}"]`);
    await row.waitFor();
    assert.equal(await row.getAttribute("data-state"), "found");
    assert.equal(
      await page.locator("#bisections tbody tr").count(),
      list.bisections.length,
    );
    assert.match(await row.innerText(), /culprit: 888888888888/);
    await shot("bisections");

    await row.locator("a[data-bisection-link]").first().click();
    await page.locator("#bisect-steps").waitFor();
    assert.equal(await page.locator("#culprit-line").innerText(), doc.line);
    // The subject's markup is text, never elements.
    assert.match(doc.line, /Parse <b>headers<\/b> twice/);
    assert.equal(await page.locator("#culprit-line b").count(), 0);
    assert.equal(await page.locator("#bisect-steps b").count(), 0);
    const steps = page.locator("#bisect-steps tbody tr");
    assert.equal(await steps.count(), doc.steps.length);
    for (let i = 0; i < doc.steps.length; i++) {
      assert.equal(
        await steps.nth(i).getAttribute("data-decision"),
        doc.steps[i].decision,
      );
      assert.equal(
        await steps.nth(i).getAttribute("data-position"),
        String(doc.steps[i].position),
      );
    }
    // The measured steps link their stored campaign by name; the one not stored is its id.
    const first = steps.nth(0);
    assert.equal(
      await first.locator('a[data-campaign-link="modes-1"]').count(),
      1,
    );
    assert.match(await first.innerText(), /#9999/);
    const band = JSON.parse(
      await page.locator("#chart-range").getAttribute("data-band"),
    );
    assert.deepEqual(
      band.map((b) => [b.step, b.low, b.high]),
      [
        [0, 0, 15],
        [1, 7, 15],
        [2, 7, 15],
        [3, 7, 9],
        [4, 7, 8],
      ],
    );
    await shot("bisection");

    await open("#/bisections/4242");
    const error = page.locator("#error");
    await error.waitFor();
    assert.match(await error.innerText(), /no bisection with id 4242/);
  });

  it("shows the API's error for a campaign that does not exist", async () => {
    await open("#/campaigns/no-such-campaign");
    const error = page.locator("#error");
    await error.waitFor();
    assert.match(await error.innerText(), /no-such-campaign/);
    await shot("error");
  });

  it("says a campaign without profiles has none, and how to take them", async () => {
    await open(`#/campaigns/${campaign}`);
    const none = page.locator("#profiles #profiles-none");
    await none.waitFor();
    assert.match(await none.innerText(), /No profiles: enable \[profile\]/);
    assert.equal(await page.locator("#flamegraph svg").count(), 0);
  });

  it("draws a flame graph, highlights a search and diffs two targets", async (t) => {
    if (!profCampaign) {
      t.skip("perf is missing: no profiled campaign");
      return;
    }
    const doc = await api(
      `/api/v1/campaigns/${profCampaign}/profile?target=hello-b&cell=hello/c4`,
    );
    assert.ok(doc.samples > 0, "the API has samples of hello-b");
    await open(`#/campaigns/${profCampaign}`);
    // The first target that is not the baseline, in the first cell.
    assert.equal(await page.locator("#profile-target").inputValue(), "hello-b");
    assert.equal(await page.locator("#profile-cell").inputValue(), "hello/c4");
    await page.locator("#flamegraph svg g rect").first().waitFor();
    assert.ok(
      (await page.locator("#flamegraph svg g rect").count()) > 3,
      "frames are drawn",
    );
    const spend = page.locator('#flamegraph svg g[name*="SpendCpu"]');
    assert.ok((await spend.count()) >= 1, "a SpendCpu frame");
    assert.match(
      await page.locator("#profile-summary").innerText(),
      /hello-b in hello\/c4: 2 window/,
    );

    // Search: the matching frames are highlighted and the details line counts their samples.
    await page.locator("#profile-search").fill("spendcpu");
    await page.waitForFunction(
      () =>
        document.querySelectorAll('#flamegraph rect[fill="#E600E6"]').length >
        0,
    );
    assert.match(
      await page.locator("#profile-details").innerText(),
      /search: \d+ of \d+ total samples/,
    );
    const highlighted = await page
      .locator("#flamegraph g")
      .evaluateAll((gs) =>
        gs
          .filter(
            (g) => g.querySelector("rect")?.getAttribute("fill") === "#E600E6",
          )
          .map((g) => g.getAttribute("name")),
      );
    assert.ok(
      highlighted.every((n) => /spendcpu/i.test(n)),
      `only SpendCpu frames: ${highlighted}`,
    );
    await page
      .locator("#profiles")
      .screenshot({ path: join(artifacts, "profile-flamegraph.png") });

    // Against the baseline: SpendCpu grew, marked "+" in its label (not by colour alone), with
    // the legend, the vanished list and the functions table from the API's diff.
    await page.locator("#profile-compare").selectOption("hello-a");
    await page.locator("#profile-legend").waitFor();
    const grown = page.locator(
      '#flamegraph svg g[name^="+ "][name*="SpendCpu"]',
    );
    await grown.first().waitFor({ state: "attached" });
    assert.ok((await grown.count()) >= 1, 'SpendCpu is marked "+"');
    assert.match(
      await page.locator("#profile-legend").innerText(),
      /\+ name grew/,
    );
    assert.equal(
      await page.locator("#profile-vanished").count(),
      1,
      "the vanished list is there",
    );
    assert.match(
      await page.locator("#profile-vanished h3").innerText(),
      /only in hello-a/,
    );
    const diff = await api(
      `/api/v1/campaigns/${profCampaign}/profile-diff?base=hello-a&new=hello-b&cell=hello/c4`,
    );
    const rows = page.locator("#profile-functions tbody tr");
    assert.equal(await rows.count(), Math.min(15, diff.diff.functions.length));
    assert.equal(
      await rows.first().getAttribute("data-function"),
      diff.diff.functions[0].function,
      "the table lists the functions in the API's order",
    );
    assert.match(
      diff.diff.functions[0].function,
      /SpendCpu/,
      "SpendCpu changed most",
    );
    assert.match(await rows.first().innerText(), /\+\d/);
    await page
      .locator("#profiles")
      .screenshot({ path: join(artifacts, "profile-diff.png") });
  });

  // hello-b's valid attempts in the profiled campaign's one cell, as the API lists them.
  const profiledWindows = async () => {
    const { record } = await api(`/api/v1/campaigns/${profCampaign}`);
    return record.windows
      .filter(
        (w) =>
          w.target === "hello-b" &&
          `${w.scenario}/${w.load_level}` === "hello/c4",
      )
      .flatMap((w) => w.attempts.filter((a) => a.verdict === "valid"));
  };

  it("redraws the flame graph of one window chosen in the Window list", async (t) => {
    if (!profCampaign) {
      t.skip("perf is missing: no profiled campaign");
      return;
    }
    const cell = await api(
      `/api/v1/campaigns/${profCampaign}/profile?target=hello-b&cell=hello/c4`,
    );
    const [first] = await profiledWindows();
    assert.ok(first, "hello-b has a valid window");
    const one = await api(
      `/api/v1/campaigns/${profCampaign}/profile?window=${first.id}`,
    );
    assert.ok(
      one.samples > 0 && one.samples < cell.samples,
      `one window's samples (${one.samples}) are fewer than the cell's (${cell.samples})`,
    );

    await open(`#/campaigns/${profCampaign}`);
    await page.locator("#flamegraph svg g rect").first().waitFor();
    const summary = page.locator("#profile-summary");
    assert.equal(
      await summary.getAttribute("data-samples"),
      String(cell.samples),
    );
    const options = await page
      .locator("#profile-window option")
      .evaluateAll((os) => os.map((o) => o.value));
    assert.equal(options[0], "", "all valid windows first");
    assert.ok(
      options.includes(String(first.id)),
      `window #${first.id} is a choice: ${options}`,
    );
    assert.equal(
      options.length,
      cell.windows + 1,
      "one choice per window the cell merges",
    );

    await page.locator("#profile-window").selectOption(String(first.id));
    await page.waitForFunction(
      (n) => document.querySelector("#profile-summary")?.dataset.samples === n,
      String(one.samples),
    );
    assert.match(
      await summary.innerText(),
      new RegExp(
        `hello-b in hello/c4, window #${first.id} · round \\d+: 1 window\\(s\\), `,
      ),
    );
    await page.locator("#flamegraph svg g rect").first().waitFor();
    assert.ok(
      (await page.locator("#flamegraph svg g rect").count()) > 3,
      "frames are drawn",
    );
    await page
      .locator("#profiles")
      .screenshot({ path: join(artifacts, "profile-window-choice.png") });

    // Comparing is of the cell's windows: the choice goes back to all of them.
    await page.locator("#profile-compare").selectOption("hello-a");
    await page.locator("#profile-legend").waitFor();
    assert.equal(await page.locator("#profile-window").inputValue(), "");
  });

  it("draws a profiled window's flame graph on its page, with search", async (t) => {
    if (!profCampaign) {
      t.skip("perf is missing: no profiled campaign");
      return;
    }
    const [first] = await profiledWindows();
    const doc = await api(`/api/v1/windows/${first.id}`);
    assert.ok(doc.profile, "the window document carries its profile row");
    assert.equal(doc.profile.error, null);
    assert.equal(doc.profile.frequency_hz, 499);
    const one = await api(
      `/api/v1/campaigns/${profCampaign}/profile?window=${first.id}`,
    );

    await open(`#/windows/${first.id}`);
    await page
      .locator("#profile-section #flamegraph svg g rect")
      .first()
      .waitFor();
    assert.ok(
      (await page.locator("#flamegraph svg g rect").count()) > 3,
      "frames are drawn",
    );
    assert.ok(
      (await page.locator('#flamegraph svg g[name*="SpendCpu"]').count()) >= 1,
      "a SpendCpu frame",
    );
    const facts = page.locator("#profile-facts");
    assert.equal(await facts.getAttribute("data-samples"), String(one.samples));
    assert.equal(
      (
        await facts.locator('[data-figure="profile_frequency"] dd').innerText()
      ).trim(),
      "499 Hz",
    );
    assert.match(
      await facts
        .locator('[data-figure="profile_cpu_us_per_request"] dd')
        .innerText(),
      /^\d/,
    );
    assert.equal(await page.locator("#profile-error").count(), 0);

    await page.locator("#profile-search").fill("SpendCpu");
    await page.waitForFunction(
      () =>
        document.querySelectorAll('#flamegraph rect[fill="#E600E6"]').length >
        0,
    );
    const highlighted = await page
      .locator("#flamegraph g")
      .evaluateAll((gs) =>
        gs
          .filter(
            (g) => g.querySelector("rect")?.getAttribute("fill") === "#E600E6",
          )
          .map((g) => g.getAttribute("name")),
      );
    assert.ok(
      highlighted.length > 0 && highlighted.every((n) => /spendcpu/i.test(n)),
      `only SpendCpu frames: ${highlighted}`,
    );
    assert.match(
      await page.locator("#profile-details").innerText(),
      /search: \d+ of \d+ total samples/,
    );
    await page.locator("#profile-reset-zoom").click();
    await shot("window-profile");
    await page
      .locator("#profile-section")
      .screenshot({ path: join(artifacts, "window-flamegraph.png") });
  });

  it("loads everything from the coordinator alone", async () => {
    const before = requests.length;
    await open("#/");
    await page.locator("#campaigns").waitFor();
    assert.ok(requests.length > before, "requests were recorded");
    const outside = requests.filter(
      (u) => !u.startsWith("data:") && new URL(u).origin !== origin,
    );
    assert.deepEqual(
      outside,
      [],
      "no request outside the coordinator's origin",
    );
    assert.deepEqual(pageErrors, [], "no uncaught error in the page");
  });

  it("runs under its Content-Security-Policy with nothing refused", async () => {
    const res = await page.goto(`${base}/`);
    assert.match(
      res.headers()["content-security-policy"] ?? "",
      /default-src 'self'/,
    );
    assert.match(
      res.headers()["content-security-policy"] ?? "",
      /frame-ancestors 'none'/,
    );
    assert.equal(res.headers()["x-frame-options"], "DENY");
    await page.locator("#campaigns").waitFor();
    assert.deepEqual(
      refusedByPolicy,
      [],
      "every page visited above did nothing the policy refuses",
    );
  });
});
