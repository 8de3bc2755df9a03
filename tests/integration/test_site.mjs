// test_site.mjs SITE [SCREENSHOT.png] - the built dashboard in a real browser:
// puppeteer-core drives Debian's chromium (headless, no download) over file://
// through every page and checks no console errors (CSP violations among them),
// no script dialogs, no failed requests, no request outside the site, no
// broken local links or images, and that the overview shows one cell per
// series in data.js; saves a screenshot of the overview.  Builds nothing.
// Exit 0 pass, 1 with one line per failure, 77 skip (no chromium or node_modules).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createRequire } from "node:module";

const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const [siteArg, shotArg] = process.argv.slice(2);
if (!siteArg) { console.error("usage: node tests/integration/test_site.mjs SITE [SCREENSHOT.png]"); process.exit(2); }
const site = path.resolve(siteArg);
if (!fs.existsSync(CHROMIUM)) { console.log(`test_site: SKIP: no chromium at '${CHROMIUM}' (apt-get install chromium)`); process.exit(77); }
const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
let puppeteer;
try {
  puppeteer = createRequire(path.join(root, "package.json"))("puppeteer-core");
} catch (e) {
  console.log(`test_site: SKIP: puppeteer-core not installed (run \`npm ci\` in ${root})`);
  process.exit(77);
}
if (!fs.existsSync(path.join(site, "index.html"))) { console.log(`test_site: FAIL: no index.html in '${site}'`); process.exit(1); }

const failures = [];
const fail = (where, what) => failures.push(`${path.relative(site, where) || where}: ${what}`);
const browser = await puppeteer.launch({
  executablePath: CHROMIUM, headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--allow-file-access-from-files"],
});
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  let current = "";
  page.on("console", (m) => { if (m.type() === "error") fail(current, `console error: ${m.text()}`); });
  page.on("pageerror", (e) => fail(current, `uncaught: ${e.message}`));
  // a script dialog is a script the site did not write (issue 18: stored XSS): fail, dismiss
  page.on("dialog", async (d) => { fail(current, `script dialog (${d.type()}): ${d.message()}`); await d.dismiss(); });
  page.on("requestfailed", (r) => fail(current, `request failed: ${r.url()} (${r.failure()?.errorText})`));
  page.on("response", (r) => { if (r.status() >= 400) fail(current, `HTTP ${r.status()}: ${r.url()}`); });
  // a request outside the site is a failure too: the page must fetch nothing
  await page.setRequestInterception(true);
  page.on("request", (r) => {
    const u = r.url();
    if (u.startsWith("data:") || u.startsWith(pathToFileURL(site).href)) return r.continue();
    fail(current, `request outside the site: ${u}`);
    r.abort();
  });

  // every local link and image of the page must exist; returns the local .html pages it links
  async function checkPage(file) {
    current = file;
    await page.goto(pathToFileURL(file).href, { waitUntil: "load" });
    const { links, imgs } = await page.evaluate(() => ({
      links: [...document.querySelectorAll("a[href]")].map((a) => a.href),
      imgs: [...document.querySelectorAll("img")].map((i) => ({ src: i.src, ok: i.complete && i.naturalWidth > 0 })),
    }));
    for (const i of imgs) if (!i.ok) fail(file, `broken image: ${i.src}`);
    const pages = [];
    for (const href of links) {
      if (!href.startsWith("file:")) { if (!/^(https?|mailto):/.test(href)) fail(file, `odd link: ${href}`); continue; }
      const target = fileURLToPath(href.split("#")[0].split("?")[0]);
      if (!fs.existsSync(target)) fail(file, `broken link: ${path.relative(site, target)}`);
      else if (target.endsWith(".html")) pages.push(target);
    }
    return pages;
  }

  const index = path.join(site, "index.html");
  const linked = await checkPage(index);
  const counts = await page.evaluate(() => ({
    series: (window.MB_DATA && window.MB_DATA.series || []).length,
    cells: document.querySelectorAll("a.cell[data-series]").length,
    ids: new Set([...document.querySelectorAll("a.cell[data-series]")].map((a) => a.dataset.series)).size,
    // series with two or more night values, and the cells that draw their sparkline
    drawable: (window.MB_DATA && window.MB_DATA.series || []).filter(
      (s) => (s.median || []).slice(-60).filter((v) => v !== null).length >= 2).length,
    sparks: document.querySelectorAll("a.cell[data-series] svg.spark polyline, a.cell[data-series] svg.spark circle")
      .length ? document.querySelectorAll("a.cell[data-series] svg.spark").length : 0,
  }));
  if (counts.series === 0) fail(index, "data.js holds no series");
  if (counts.cells !== counts.series || counts.ids !== counts.series)
    fail(index, `overview shows ${counts.cells} cells (${counts.ids} distinct) for ${counts.series} series in data.js`);
  if (counts.sparks !== counts.drawable)
    fail(index, `overview draws ${counts.sparks} sparklines for ${counts.drawable} series with two or more nights`);
  if (shotArg) {
    fs.mkdirSync(path.dirname(path.resolve(shotArg)), { recursive: true });
    await page.screenshot({ path: shotArg, fullPage: true });
  }

  // every page: those linked from the overview, every series page, and what they link
  const seen = new Set([index]);
  const queue = [...linked];
  const sdir = path.join(site, "series");
  if (fs.existsSync(sdir)) for (const f of fs.readdirSync(sdir).sort()) queue.push(path.join(sdir, f));
  // the fleet view: every entry of data.js linked from the overview, each page one plot
  const fleetN = await page.evaluate(() => (window.MB_DATA.fleet || []).length);
  const fleetLinks = await page.evaluate(() => document.querySelectorAll('#fleet a[href^="fleet/"]').length);
  if (fleetLinks !== fleetN) fail(index, `overview links ${fleetLinks} fleet pages for ${fleetN} fleet entries`);
  const fdir = path.join(site, "fleet");
  if (fs.existsSync(fdir)) for (const f of fs.readdirSync(fdir).sort()) queue.push(path.join(fdir, f));
  let plotted = 0, fleetPlotted = 0;
  while (queue.length) {
    const f = queue.shift();
    if (seen.has(f)) continue;
    seen.add(f);
    queue.push(...await checkPage(f));
    if (f.startsWith(sdir + path.sep)) {
      const n = await page.evaluate(() => document.querySelectorAll(".uplot canvas").length);
      if (n < 2) fail(f, `${n} plots drawn, expected 2`); else plotted++;
    }
    if (f.startsWith(fdir + path.sep)) {
      const n = await page.evaluate(() => document.querySelectorAll(".uplot canvas").length);
      if (n < 1) fail(f, "no fleet plot drawn"); else fleetPlotted++;
    }
  }
  console.log(`test_site: ${seen.size} pages, ${counts.cells} overview cells for ${counts.series} series, ${plotted} series plotted, ` +
              `${fleetPlotted} fleet pages plotted` +
              (shotArg ? `, screenshot ${shotArg}` : ""));
} finally {
  await browser.close();
}
for (const f of failures) console.log(`test_site: FAIL: ${f}`);
process.exit(failures.length ? 1 : 0);
