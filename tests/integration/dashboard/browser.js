// browser.js: what the dashboard's browser tests share (drive.js of
// test_dashboard.sh, manage.js of test_dashboard_manage.sh): the "ok - NAME"
// / "not ok - NAME" lines their shell scripts read as cases, curl as an API
// client, and the checks of every page (console errors, axe-core, a label
// on every control, the phone's width, screenshots at both sizes), and the
// headless Debian Chromium (puppeteer-core, never a downloaded browser)
// that can reach nothing but 127.0.0.1.
//
// Environment: DASH_NODE_DIR (node_modules), CHROMIUM, BASE_URL,
// DASH_SHOTS (screenshot folder), DASH_TZ (the emulated time zone),
// DASH_PROFILE (the browser's profile folder).
'use strict';
const { createRequire } = require('node:module');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const env = (n) => {
    if (!process.env[n])
        throw new Error(`${n} is not set`);
    return process.env[n];
};
const nodeRequire = createRequire(path.join(env('DASH_NODE_DIR'), 'package.json'));
const puppeteer = nodeRequire('puppeteer-core');
const axeSource = fs.readFileSync(nodeRequire.resolve('axe-core/axe.min.js'), 'utf8');

const BASE = env('BASE_URL');
const APP = BASE + '/app/';
const SHOTS = env('DASH_SHOTS');
const TZ = env('DASH_TZ');
const DESKTOP = { width: 1280, height: 900 };
// (not isMobile: changing it reloads the page, and the page's state with it)
const PHONE = { width: 390, height: 844 };

// ---- results
const state = { failedBefore: false };
const results = [];
function report(name, problems) {
    const ok = problems.length === 0;
    console.log(`${ok ? 'ok' : 'not ok'} - ${name}`);
    for (const p of problems)
        console.log(`#   ${String(p).replace(/\n/g, '\n#   ')}`);
    results.push(ok);
}
// step(NAME, FN): run FN; a throw or a problem it pushed fails the case
async function step(name, fn) {
    const problems = [];
    try {
        await fn(problems);
    } catch (e) {
        problems.push(e && e.stack ? e.stack.split('\n').slice(0, 4).join('\n') : String(e));
        state.failedBefore = true;
    }
    report(name, problems);
    return problems.length === 0;
}
function expect(problems, what, want, got) {
    if (JSON.stringify(want) !== JSON.stringify(got))
        problems.push(`${what}: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}`);
}

// curl(METHOD, PATH, {key, cookie, body, headers}): {status, body, text}
// of a request to BASE made with curl
function curl(method, p, { key, cookie, body, headers } = {}) {
    const args = ['-sS', '-X', method, '-o', '-', '-w', '\n%{http_code}', '--max-time', '60'];
    if (key)
        args.push('-H', `Authorization: Bearer ${key}`);
    if (cookie)
        args.push('-H', `Cookie: ${cookie}`);
    for (const hd of headers || [])
        args.push('-H', hd);
    if (body !== undefined)
        args.push('-H', 'Content-Type: application/json', '--data-binary', JSON.stringify(body));
    else if (method === 'POST')
        args.push('--data', '');     // (a POST without a body still says its length: 411 otherwise)
    args.push(BASE + p);
    const out = execFileSync('curl', args, { encoding: 'utf8' });
    const i = out.lastIndexOf('\n');
    const text = out.slice(0, i);
    let json = null;
    try { json = JSON.parse(text); } catch (e) { json = null; }
    return { status: Number(out.slice(i + 1)), body: json, text };
}

// curlBytes(PATH, KEY): the body of GET PATH with curl, as bytes
function curlBytes(p, key) {
    return execFileSync('curl', ['-sS', '--fail', '--max-time', '60', '-H', `Authorization: Bearer ${key}`, BASE + p]);
}

// ---- what every page must pass: console, axe, phone width, screenshot
const consoleProblems = [];
const axeProblems = [];
const phoneProblems = [];
let pageName = 'start';

// watch(PAGE, ALLOWED): console errors and failed requests become
// problems, but for the API refusals ALLOWED() lists ([path or RegExp,
// status]: those the running step provokes)
function watch(page, allowed) {
    page.on('console', (m) => {
        if (m.type() !== 'error' && m.type() !== 'warn' && m.type() !== 'warning')
            return;
        const text = m.text();
        const url = (m.location() && m.location().url) || '';
        const st = /status of (\d{3})/.exec(text);
        if (st && url.startsWith(BASE)) {
            const p = new URL(url).pathname;
            if (allowed().some(([ap, as]) => (ap instanceof RegExp ? ap.test(p) : ap === p) && as === Number(st[1])))
                return;
        }
        consoleProblems.push(`${pageName}: console ${m.type()}: ${text} ${url}`);
    });
    page.on('pageerror', (e) => consoleProblems.push(`${pageName}: uncaught: ${e.message}`));
    page.on('requestfailed', (r) => consoleProblems.push(`${pageName}: request failed: ${r.url()} ${r.failure() && r.failure().errorText}`));
}

async function ready(page, name) {
    await page.waitForSelector(`main[data-page="${name}"][aria-busy="false"]`);
}

// visit(PAGE, NAME): the checks of every page, then a screenshot at both sizes
async function visit(page, name) {
    pageName = name;
    await page.evaluate(axeSource);
    const r = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
    for (const v of r.violations)
        if (v.impact === 'serious' || v.impact === 'critical')
            axeProblems.push(`${name}: ${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join('; ')})`);
    // every control has a name a screen reader can say
    const nameless = await page.evaluate(() => [...document.querySelectorAll('input, button, select, textarea')]
        .filter((el) => el.type !== 'hidden' && el.offsetParent !== null)
        .filter((el) => !((el.labels && el.labels.length) || el.getAttribute('aria-label') ||
            el.getAttribute('aria-labelledby') || (el.tagName === 'BUTTON' && el.textContent.trim())))
        .map((el) => el.id || el.name || el.outerHTML.slice(0, 60)));
    for (const n of nameless)
        axeProblems.push(`${name}: a control without a label: ${n}`);
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
    await page.setViewport(PHONE);
    const wide = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    if (wide[0] > wide[1])
        phoneProblems.push(`${name}: ${wide[0]} px wide on a ${wide[1]} px screen`);
    await page.screenshot({ path: path.join(SHOTS, `${name}-phone.png`), fullPage: true });
    await page.setViewport(DESKTOP);
}

async function text(page, sel) {
    return page.$eval(sel, (el) => el.textContent.trim());
}

// launch(ALLOWED, RUN): RUN(PAGE) in a new headless Chromium (its
// profile DASH_PROFILE, the zone DASH_TZ, the page watched), closed after
async function launch(allowed, run) {
    fs.mkdirSync(SHOTS, { recursive: true });
    const browser = await puppeteer.launch({
        executablePath: env('CHROMIUM'),
        headless: true,
        userDataDir: env('DASH_PROFILE'),
        // loopback only: no name but 127.0.0.1 resolves, and the browser's
        // own traffic (updates, reports, pings, field trials) is off
        args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
            '--no-default-browser-check', '--disable-extensions', '--disable-background-networking',
            '--disable-component-update', '--disable-sync', '--disable-default-apps', '--mute-audio',
            '--password-store=basic', '--renderer-process-limit=1', '--no-pings',
            '--disable-domain-reliability', '--disable-client-side-phishing-detection',
            '--disable-breakpad', '--metrics-recording-only', '--disable-field-trial-config',
            '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
            '--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication,CertificateTransparencyComponentUpdater'],
        defaultViewport: DESKTOP,
    });
    try {
        const page = await browser.newPage();
        page.setDefaultTimeout(30000);
        await page.emulateTimezone(TZ);
        watch(page, allowed);
        await run(page);
    } finally {
        await browser.close();
    }
}

module.exports = {
    env, BASE, APP, SHOTS, TZ, DESKTOP, PHONE, state, results, report, step, expect,
    curl, curlBytes, consoleProblems, axeProblems, phoneProblems, watch, ready, visit,
    text, launch,
};
