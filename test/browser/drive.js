// Drives Debian's Chromium with playwright-core (no browser download) through
// Prism's endurance page and prints what it saw as one JSON object on stdout.
// Run by browser_test.go:
//   PRISM_URL=… EMPTY_URL=… DOWN_URL=… READER_TOKEN=… OUTSIDER_TOKEN=… SCREENSHOT=… USER_DATA_DIR=… node drive.js
'use strict';
const { chromium } = require('playwright-core');

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

async function visit(ctx, url, out) {
  const page = await ctx.newPage();
  out.consoleErrors = [];
  out.pageErrors = [];
  out.badResponses = [];
  page.on('console', (m) => { if (m.type() === 'error') out.consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => out.pageErrors.push(String(e)));
  page.on('requestfailed', (r) => out.badResponses.push(r.url() + ' ' + ((r.failure() || {}).errorText || 'failed')));
  page.on('response', (r) => { if (r.status() >= 400) out.badResponses.push(r.url() + ' ' + r.status()); });
  await page.goto(url, { waitUntil: 'load', timeout: 30000 });
  await page.waitForFunction(() => window.prismEndurance && window.prismEndurance.ready, null, { timeout: 30000 });
  out.state = await page.evaluate(() => document.body.dataset.state);
  out.status = await page.textContent('#status');
  out.tableState = await page.evaluate(() => { const e = document.getElementById('table-state'); return e.hidden ? '' : e.textContent; });
  out.chartState = await page.evaluate(() => { const e = document.getElementById('chart-state'); return e.hidden ? '' : e.textContent; });
  out.rows = await page.$$eval('#nodes tbody tr', (trs) => trs.map((tr) => Array.from(tr.cells).map((td) => td.textContent)));
  out.pageInfo = await page.textContent('#page-info');
  out.osdRows = await page.$$eval('#osds tbody tr', (trs) => trs.map((tr) => Array.from(tr.cells).map((td) => td.textContent)));
  out.osdState = await page.evaluate(() => { const e = document.getElementById('osds-state'); return e.hidden ? '' : e.textContent; });
  out.summary = await page.evaluate(() => ['sum-nodes', 'sum-devices', 'sum-wear', 'sum-wearout'].map((id) => document.getElementById(id).textContent));
  return page;
}

// signIn: the page first answers with its sign-in form (401); a token without the right is
// refused (403) and kept nowhere; the reader's token sets the cookie and opens the page.
async function signIn(ctx, url, out) {
  const page = await ctx.newPage();
  const first = await page.goto(url, { waitUntil: 'load', timeout: 30000 });
  out.firstStatus = first.status();
  out.formShown = (await page.$('input[name=token]')) !== null;
  await page.fill('input[name=token]', process.env.OUTSIDER_TOKEN);
  const [refused] = await Promise.all([page.waitForNavigation(), page.click('#signin')]);
  out.refusedStatus = refused.status();
  out.refusedText = await page.textContent('#signin-reason');
  await page.fill('input[name=token]', process.env.READER_TOKEN);
  await Promise.all([page.waitForNavigation(), page.click('#signin')]);
  await page.waitForFunction(() => window.prismEndurance && window.prismEndurance.ready, null, { timeout: 30000 });
  out.afterState = await page.evaluate(() => document.body.dataset.state);
  await page.close();
}

(async () => {
  const result = {};
  const ctx = await chromium.launchPersistentContext(process.env.USER_DATA_DIR, {
    executablePath: '/usr/bin/chromium',
    args: ARGS,
    headless: true,
    viewport: { width: 1280, height: 900 },
    timeout: 60000,
  });
  try {
    await signIn(ctx, process.env.PRISM_URL, (result.signin = {}));
    // The real page against the real Prometheus.
    const main = (result.main = {});
    const page = await visit(ctx, process.env.PRISM_URL + '?range=900', main);
    // uPlot draws on the next animation frame.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    main.chart = await page.evaluate(() => {
      const u = window.prismEndurance.chart;
      if (!u) return null;
      return {
        series: u.series.length - 1,
        labels: u.series.slice(1).map((s) => s.label),
        points: u.data[0].length,
        nonNull: u.data.slice(1).map((ys) => ys.filter((v) => v != null).length),
      };
    });
    main.canvasInk = await page.evaluate(() => {
      const c = document.querySelector('#chart canvas');
      if (!c) return 0;
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) n++;
      return n;
    });
    await page.screenshot({ path: process.env.SCREENSHOT, fullPage: true });

    // Paging: two rows a page; page 2 holds the third and fourth soonest.
    await visit(ctx, process.env.PRISM_URL + '?size=2&page=2', (result.paged = {}));

    // A Prometheus without Prism's metrics: an honest "no data".
    if (process.env.EMPTY_URL) await visit(ctx, process.env.EMPTY_URL, (result.empty = {}));
    // No Prometheus at all: the page says the queries failed.
    if (process.env.DOWN_URL) await visit(ctx, process.env.DOWN_URL, (result.down = {}));
  } finally {
    await ctx.close();
  }
  process.stdout.write(JSON.stringify(result) + '\n');
})().catch((e) => {
  process.stderr.write(String((e && e.stack) || e) + '\n');
  process.exit(1);
});
