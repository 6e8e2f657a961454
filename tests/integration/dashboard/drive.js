// drive.js: the dashboard's browser test, run by test_dashboard.sh (which
// starts the stack and reads this script's "ok - NAME" / "not ok - NAME"
// lines as its cases). One headless Debian Chromium (puppeteer-core, never a
// downloaded browser) goes through the pages against the real stack behind
// lighttpd; curl, as an API client would, checks what the pages did. Every
// page is checked with axe-core (no serious or critical violation), for
// console errors, on a phone-sized screen, and kept as a screenshot (these
// checks, the case lines, curl and the browser are browser.js's).
//
// DASH_PASS=apache: only a short pass (sign-in, overview, a key, sign-out)
// against Apache's snippet at BASE_URL.
// Environment: DASH_NODE_DIR (node_modules), CHROMIUM, BASE_URL, DASH_EMAIL,
// DASH_PASSWORD, DASH_LOCK_EMAIL (an account to lock out), DASH_KEY (an API
// key of DASH_EMAIL's account, for curl), DASH_SANDBOX (the sandbox
// domain), DASH_SHOTS (screenshot folder), DASH_TZ (the emulated time zone),
// DASH_INVITE (a link of svcadm account invite) and DASH_INVITE_EMAIL,
// DASH_CSV (a small list to upload), DASH_WORKER and DASH_CONF (svc-worker
// and its config: the steps run it --once, as cron would, and
// DASH_WORKER_LOG takes its output), DASH_OTHER_JOB (another account's
// job).
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const {
    env, BASE, APP, TZ, state, results, report, step, expect, curl, curlBytes,
    consoleProblems, axeProblems, phoneProblems, ready, visit, text, launch,
} = require('./browser.js');

let allowed = [];       // API refusals the running step provokes: [path, status]
let failedBefore = false;

// workerOnce(): one pass of svc-worker --once (DASH_WORKER) on the test's
// config (DASH_CONF), its output appended to DASH_WORKER_LOG
function workerOnce() {
    const fd = fs.openSync(env('DASH_WORKER_LOG'), 'a');
    try {
        execFileSync('timeout', ['120', env('DASH_WORKER'), '-c', env('DASH_CONF'), '--once'], { stdio: ['ignore', fd, fd] });
    } finally {
        fs.closeSync(fd);
    }
}

async function main() {
    try {
        await launch(() => allowed, run);
    } finally {
        failedBefore = state.failedBefore;
    }
}

async function run(page) {
    const email = env('DASH_EMAIL');
    const password = env('DASH_PASSWORD');
    const key = env('DASH_KEY');
    let cookie = null;
    let secret = null;
    let made = null;        // the key the keys page made (POST /v1/keys's answer)

    // makeKey(PR, NAME, SCOPES, FILL): a key made on the keys page, as both
    // passes make one: NAME typed, the boxes of SCOPES ticked, then FILL()
    // (if given) fills in the rest of the form (and may try Create first);
    // Create answered 201, made and secret set from the API's answer, the
    // secret shown the API's, the key's row listed as active
    async function makeKey(pr, name, scopes, fill) {
        await page.click('nav a[href="#keys"]');
        await ready(page, 'keys');
        await page.type('#key-name', name);
        for (const s of scopes)
            await page.click(`#scope-${s}`);
        if (fill)
            await fill();
        const [res] = await Promise.all([
            page.waitForResponse((r) => r.url() === BASE + '/v1/keys' && r.request().method() === 'POST'),
            page.click('#key-create'),
        ]);
        expect(pr, 'the API\'s status', 201, res.status());
        made = await res.json();
        await page.waitForSelector('#new-key-secret');
        secret = await page.$eval('#new-key-secret', (e) => e.value);
        expect(pr, 'the secret shown is the API\'s', made.key, secret);
        await page.waitForSelector(`tr[data-key-id="${made.id}"][data-status="active"]`);
    }

    // ---- DASH_PASS=apache: a short pass through Apache's snippet (sign
    // in, overview, one key made, sign-out), with the same checks of
    // every page; test_dashboard.sh runs it after the whole pass behind
    // lighttpd
    if (process.env.DASH_PASS === 'apache') {
        await step('through Apache: /app/ shows the sign-in form with the CSP; sign-in opens the overview, the cookie HttpOnly', async (pr) => {
            allowed = [['/v1/session', 401]];
            const res = await page.goto(APP);
            expect(pr, 'status of /app/', 200, res.status());
            const csp = res.headers()['content-security-policy'] || '';
            if (!/frame-ancestors 'none'/.test(csp) || /unsafe-inline/.test(csp) || !/script-src 'self'/.test(csp))
                pr.push(`CSP of /app/: ${csp}`);
            await ready(page, 'signin');
            await visit(page, 'apache-signin');
            await page.type('#signin-email', email);
            await page.type('#signin-password', password);
            const [r] = await Promise.all([
                page.waitForResponse((x) => x.url() === BASE + '/v1/session' && x.request().method() === 'POST'),
                page.click('#signin-submit'),
            ]);
            expect(pr, 'the API\'s status', 201, r.status());
            expect(pr, 'the answer came through Apache', true, /Apache/.test(r.headers().server || ''));
            await ready(page, 'overview');
            const c = (await page.cookies(BASE)).find((x) => x.name === 'svc_session');
            if (!c)
                throw new Error('no svc_session cookie after sign-in');
            expect(pr, 'HttpOnly, SameSite', [true, 'Strict'], [c.httpOnly, c.sameSite]);
            cookie = `svc_session=${c.value}`;
            allowed = [];
        });
        await step('through Apache: the overview\'s balance and chart are the API\'s', async (pr) => {
            const api = curl('GET', '/v1/credits?days=30', { key });
            expect(pr, 'curl /v1/credits?days=30', 200, api.status);
            expect(pr, 'balance', String(api.body.balance), await page.$eval('#balance', (e) => e.dataset.value));
            expect(pr, 'the used bars', api.body.daily.map((d) => [d.date, String(d.used)]),
                await page.$$eval('#usage-svg rect[data-kind="used"]', (rs) => rs.map((r) => [r.dataset.date, r.dataset.value])));
            await visit(page, 'apache-overview');
        });
        await step('through Apache: a key made on the keys page (CSRF token sent), its secret shown once and working with curl', async (pr) => {
            await makeKey(pr, 'through Apache', ['credits_read']);
            expect(pr, 'curl /v1/credits with the new key', 200, curl('GET', '/v1/credits', { key: secret }).status);
            await visit(page, 'apache-keys');
        });
        await step('through Apache: sign-out returns to the sign-in form; the old cookie is refused', async (pr) => {
            const [res] = await Promise.all([
                page.waitForResponse((r) => r.url() === BASE + '/v1/session' && r.request().method() === 'DELETE'),
                page.click('#signout'),
            ]);
            expect(pr, 'the API\'s status', 200, res.status());
            await ready(page, 'signin');
            expect(pr, 'GET /v1/session with the old cookie', 401, curl('GET', '/v1/session', { cookie }).status);
            await visit(page, 'apache-signed-out');
        });
        report('through Apache: no console errors on any page', consoleProblems);
        report('through Apache: axe-core: no serious or critical violation on any page; every control has a label', axeProblems);
        report('through Apache: every page fits a phone-sized screen', phoneProblems);
        return;
    }

    await step('without a session /app/ shows the sign-in form; the app\'s files carry the CSP', async (pr) => {
        allowed = [['/v1/session', 401]];
        const res = await page.goto(APP);
        expect(pr, 'status of /app/', 200, res.status());
        const csp = res.headers()['content-security-policy'] || '';
        if (!/frame-ancestors 'none'/.test(csp) || /unsafe-inline/.test(csp) || !/script-src 'self'/.test(csp))
            pr.push(`CSP of /app/: ${csp}`);
        await ready(page, 'signin');
        expect(pr, 'the document title', 'Sign in — svc dashboard', await page.title());
        await visit(page, 'signin');
    });

    await step('a wrong password is refused and the form says so in words', async (pr) => {
        allowed = [['/v1/session', 401]];
        await page.type('#signin-email', email);
        await page.type('#signin-password', 'not the password at all');
        const [res] = await Promise.all([
            page.waitForResponse((r) => r.url() === BASE + '/v1/session' && r.request().method() === 'POST'),
            page.click('#signin-submit'),
        ]);
        expect(pr, 'the API\'s status', 401, res.status());
        await page.waitForSelector('#signin-error:not(:empty)');
        expect(pr, 'the error\'s code', 'invalid_credentials', await page.$eval('#signin-error', (e) => e.dataset.code));
        const t = await text(page, '#signin-error');
        if (!/e-mail address or the password is not right/.test(t))
            pr.push(`message: ${t}`);
        expect(pr, 'still on the sign-in form', 'signin', await page.$eval('main', (m) => m.dataset.page));
        expect(pr, 'the password field marked invalid', 'true', await page.$eval('#signin-password', (e) => e.getAttribute('aria-invalid')));
        await visit(page, 'signin-refused');
    });

    await step('after repeated failures the lockout\'s 429 is shown with its wait', async (pr) => {
        allowed = [['/v1/session', 401], ['/v1/session', 429]];
        const lock = env('DASH_LOCK_EMAIL');
        let last = null;
        for (let i = 0; i < 10; i++) {
            await page.$eval('#signin-email', (e) => { e.value = ''; });
            await page.type('#signin-email', lock);
            await page.type('#signin-password', `wrong password ${i}`);
            const [res] = await Promise.all([
                page.waitForResponse((r) => r.url() === BASE + '/v1/session' && r.request().method() === 'POST'),
                page.click('#signin-submit'),
            ]);
            last = res;
            if (res.status() === 429)
                break;
        }
        expect(pr, 'the API\'s status at last', 429, last.status());
        const wait = Number(last.headers()['retry-after']);
        await page.waitForFunction(() => document.querySelector('#signin-error').dataset.code === 'too_many_signin_attempts');
        const t = await text(page, '#signin-error');
        const m = /^Too many failed sign-in attempts\. Wait (\d+) (seconds?|minutes?) before you try again\.$/.exec(t);
        if (!m)
            pr.push(`message: ${t}`);
        else if (m[2].startsWith('second') && Number(m[1]) !== wait)
            pr.push(`the wait shown (${m[1]} s) is not Retry-After (${wait})`);
        await visit(page, 'signin-locked');
    });

    await step('sign-in with the keyboard (e-mail, Tab, password, Enter) opens the overview; the cookie is HttpOnly', async (pr) => {
        allowed = [];
        await page.$eval('#signin-email', (e) => { e.value = ''; });
        await page.focus('#signin-email');
        await page.keyboard.type(email);
        await page.keyboard.press('Tab');
        expect(pr, 'Tab goes to', 'signin-password', await page.evaluate(() => document.activeElement.id));
        await page.keyboard.type(password);
        const [res] = await Promise.all([
            page.waitForResponse((r) => r.url() === BASE + '/v1/session' && r.request().method() === 'POST'),
            page.keyboard.press('Enter'),
        ]);
        expect(pr, 'the API\'s status', 201, res.status());
        await ready(page, 'overview');
        const jar = await page.cookies(BASE);
        const c = jar.find((x) => x.name === 'svc_session');
        if (!c)
            throw new Error('no svc_session cookie after sign-in');
        expect(pr, 'HttpOnly', true, c.httpOnly);
        expect(pr, 'SameSite', 'Strict', c.sameSite);
        cookie = `svc_session=${c.value}`;
        const dc = await page.evaluate(() => document.cookie);
        if (dc.includes('svc_session') || dc.includes(c.value))
            pr.push(`document.cookie shows the session: ${dc}`);
        const stored = await page.evaluate(() => JSON.stringify([Object.keys(localStorage), Object.keys(sessionStorage)]));
        expect(pr, 'nothing kept in localStorage or sessionStorage', '[[],[]]', stored);
    });

    await step('the overview shows the balance the API gives, and the rate-limit window', async (pr) => {
        const api = curl('GET', '/v1/credits', { key });
        expect(pr, 'curl /v1/credits', 200, api.status);
        expect(pr, 'balance on the page (data)', String(api.body.balance), await page.$eval('#balance', (e) => e.dataset.value));
        expect(pr, 'balance on the page (text)', String(api.body.balance), await text(page, '#balance'));
        const rl = Number(await page.$eval('#rl-remaining', (e) => e.dataset.value));
        if (!(rl >= 0 && rl <= 100))
            pr.push(`requests left: ${rl}`);
        await visit(page, 'overview');
    });

    await step('the overview\'s chart of the last 30 days is the API\'s daily usage: each bar\'s day, value and height, the table, the totals', async (pr) => {
        const api = curl('GET', '/v1/credits?days=30', { key });
        expect(pr, 'curl /v1/credits?days=30', 200, api.status);
        const daily = api.body.daily;
        expect(pr, 'days', 30, daily.length);
        if (!daily.some((d) => d.used > 0) || !daily.some((d) => d.refunded > 0))
            pr.push(`no usage to draw: ${JSON.stringify(daily)}`);
        const bars = await page.$$eval('#usage-svg rect', (rs) => rs.map((r) => [r.dataset.kind, r.dataset.date,
            Number(r.dataset.value), Number(r.getAttribute('height'))]));
        const top = Number(await page.$eval('#usage-svg', (e) => e.dataset.top));
        const plot = Number(await page.$eval('#usage-svg', (e) => e.dataset.plotHeight));
        for (const kind of ['used', 'refunded']) {
            const mine = bars.filter((b) => b[0] === kind);
            expect(pr, `the ${kind} bars' days and values`, daily.map((d) => [d.date, d[kind]]), mine.map((b) => [b[1], b[2]]));
            for (const b of mine)
                if (Math.abs(b[3] - (plot * b[2]) / top) > 0.01)
                    pr.push(`${kind} bar of ${b[1]}: ${b[3]} units high for ${b[2]} of ${top} (plot ${plot})`);
        }
        const most = Math.max(...daily.map((d) => Math.max(d.used, d.refunded)));
        if (!(top >= most && top < 2.5 * most + 1))
            pr.push(`the axis' top ${top} for a largest value of ${most}`);
        expect(pr, 'the table (newest first)', daily.slice().reverse().map((d) => [d.date, String(d.used), String(d.refunded)]),
            await page.$$eval('#usage-table tbody tr', (trs) => trs.map((tr) => [tr.dataset.date,
                ...[...tr.querySelectorAll('td')].map((td) => td.dataset.value)])));
        const sum = (k) => daily.reduce((a, d) => a + d[k], 0);
        expect(pr, 'the totals on the figure', [String(sum('used')), String(sum('refunded'))],
            await page.$eval('#usage-chart', (e) => [e.dataset.used, e.dataset.refunded]));
        const said = await text(page, '#usage-summary');
        if (!said.startsWith(`${sum('used')} credits used and ${sum('refunded')} refunded over the 30 days`))
            pr.push(`the summary: ${said}`);
        // what a screen reader is given: the SVG named by its title and summary
        expect(pr, 'the SVG\'s role and name', ['img', 'usage-title usage-desc'],
            await page.$eval('#usage-svg', (e) => [e.getAttribute('role'), e.getAttribute('aria-labelledby')]));
        await page.click('#usage-chart summary');
        await visit(page, 'overview-usage');
    });

    await step('times are shown in the user\'s time zone', async (pr) => {
        expect(pr, 'the zone named in the footer', TZ, await text(page, '#tz'));
        const t = await page.$eval('#rl-reset time', (el) => [el.textContent, new Intl.DateTimeFormat(undefined, {
            year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit',
            second: '2-digit', timeZoneName: 'short', timeZone: 'UTC' }).format(new Date(el.dateTime)),
        new Intl.DateTimeFormat(undefined, { timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
            year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit',
            second: '2-digit', timeZoneName: 'short' }).format(new Date(el.dateTime))]);
        expect(pr, 'the reset time in the emulated zone', t[2], t[0]);
        if (t[0] === t[1])
            pr.push(`the reset time reads as UTC: ${t[0]}`);
    });

    await step('keys: a key made with scopes, rate limit and IP allowlist; its secret is shown once', async (pr) => {
        await makeKey(pr, 'from the browser test', ['verify_single', 'credits_read'], async () => {
            await page.type('#key-allow', '127.0.0.1\n::1');
            // above the tier's limit: the API's 400 said next to the form, on the field
            allowed = [['/v1/keys', 400]];
            await page.type('#key-rate', '5000');
            const [bad] = await Promise.all([
                page.waitForResponse((r) => r.url() === BASE + '/v1/keys' && r.request().method() === 'POST'),
                page.click('#key-create'),
            ]);
            expect(pr, 'a rate limit above the tier\'s', 400, bad.status());
            const badBody = await bad.json();
            await page.waitForSelector('#create-error:not(:empty)');
            const et = await text(page, '#create-error');
            if (!et.startsWith('The key was not created: ') || !et.includes(badBody.error.message))
                pr.push(`the refusal in words: ${et}`);
            expect(pr, 'the field marked', 'true', await page.$eval('#key-rate', (e) => e.getAttribute('aria-invalid')));
            expect(pr, 'the focus on it', 'key-rate', await page.evaluate(() => document.activeElement.id));
            await visit(page, 'keys-refused');
            allowed = [];
            await page.$eval('#key-rate', (e) => { e.value = ''; });
            await page.type('#key-rate', '50');
        });
        if (!/^svc_live_/.test(secret || ''))
            pr.push(`secret: ${secret}`);
        expect(pr, 'scopes', ['verify:single', 'credits:read'], made.scopes);
        expect(pr, 'rateLimit', 50, made.rateLimit);
        expect(pr, 'sandbox', false, made.sandbox);
        expect(pr, 'ip_allowlist', 2, made.ip_allowlist.length);
        await page.click('#new-key-secret-copy');
        await page.waitForSelector('#new-key-secret-copied:not(:empty)');
        await visit(page, 'keys-new-secret');
        // shown once: the page drawn again has it nowhere, nor the storage
        await page.click('nav a[href="#overview"]');
        await ready(page, 'overview');
        await page.click('nav a[href="#keys"]');
        await ready(page, 'keys');
        const again = await page.evaluate((s) => document.documentElement.outerHTML.includes(s) ||
            JSON.stringify({ ...localStorage }).includes(s) || JSON.stringify({ ...sessionStorage }).includes(s), secret);
        expect(pr, 'the secret anywhere after the page is drawn again', false, again);
        const list = curl('GET', '/v1/keys', { key });
        if (!list.body.data.some((k) => k.id === made.id && k.key === undefined))
            pr.push('the key is not in GET /v1/keys');
    });

    await step('the new key works against the API (curl)', async (pr) => {
        if (!secret)
            throw new Error('no key was made');
        const r = curl('GET', '/v1/credits', { key: secret });
        expect(pr, 'curl /v1/credits with the new key', 200, r.status);
    });

    await step('revoke asks first (Cancel keeps the key), then revokes; the API refuses the key', async (pr) => {
        if (!made)
            throw new Error('no key was made');
        const btn = `tr[data-key-id="${made.id}"] button.revoke`;
        await page.click(btn);
        await page.waitForSelector('#revoke-dialog[open]');
        expect(pr, 'focus in the dialog on', 'revoke-cancel', await page.evaluate(() => document.activeElement.id));
        await visit(page, 'keys-revoke-confirm');
        await page.keyboard.press('Escape');
        await page.waitForSelector('#revoke-dialog:not([open])');
        expect(pr, 'the key after Cancel', 200, curl('GET', '/v1/credits', { key: secret }).status);
        await page.click(btn);
        await page.waitForSelector('#revoke-dialog[open]');
        const [res] = await Promise.all([
            page.waitForResponse((r) => r.url() === `${BASE}/v1/keys/${made.id}` && r.request().method() === 'DELETE'),
            page.click('#revoke-confirm'),
        ]);
        expect(pr, 'the API\'s status', 200, res.status());
        await page.waitForSelector(`tr[data-key-id="${made.id}"][data-status="revoked"]`);
        const t = await text(page, '#keys-notice');
        if (!/is revoked/.test(t))
            pr.push(`notice: ${t}`);
        const r = curl('GET', '/v1/credits', { key: secret });
        expect(pr, 'curl /v1/credits with the revoked key', 401, r.status);
        await visit(page, 'keys');
    });

    await step('verify an address: the page shows the API\'s whole answer, the sub-status in words', async (pr) => {
        const addr = `mailbox_full@${env('DASH_SANDBOX')}`;
        await page.click('nav a[href="#verify"]');
        await ready(page, 'verify');
        await page.type('#verify-email', addr);
        const [res] = await Promise.all([
            page.waitForResponse((r) => r.url() === BASE + '/v1/verify' && r.request().method() === 'POST'),
            page.click('#verify-submit'),
        ]);
        expect(pr, 'the API\'s status', 200, res.status());
        const got = await res.json();
        await page.waitForSelector('#verify-result');
        const shown = await page.$$eval('[data-field]', (els) => Object.fromEntries(els.map((e) => [e.dataset.field, e.dataset.value])));
        const flat = (v) => (v === null ? 'null' : String(v));
        const want = {
            email: got.email, status: got.status, reason: got.reason, sub_status: flat(got.sub_status),
            score: flat(got.score), score_basis: flat(got.score_basis), did_you_mean: flat(got.did_you_mean),
            role: got.role, spam_trap: got.spam_trap,
            catch_all_verdict: flat(got.catch_all_verdict), 'domain.name': got.domain.name,
            'domain.acceptAll': got.domain.acceptAll, 'domain.disposable': got.domain.disposable,
            'domain.free': got.domain.free, mx: got.mx.map((m) => `${m.priority} ${m.host}`).join(', '),
            provider: flat(got.provider), 'smtp.code': flat(got.smtp ? got.smtp.code : null),
            'smtp.tls': flat(got.smtp ? got.smtp.tls : null), verified_at: got.verified_at,
            cached: flat(got.cached), credits_charged: flat(got.credits_charged),
            credits_remaining: flat(got.credits_remaining),
        };
        expect(pr, 'every field of the answer on the page', want, shown);
        const covered = new Set(Object.keys(want).map((k) => k.split('.')[0]));
        const missing = Object.keys(got).filter((k) => !covered.has(k));
        if (missing.length)
            pr.push(`fields of the answer the page does not show: ${missing.join(', ')}`);
        expect(pr, 'the JSON shown', got, JSON.parse(await text(page, '#verify-json')));
        const sub = await page.$eval('[data-field="sub_status"]', (e) => e.textContent);
        if (!/mailbox is full/i.test(sub))
            pr.push(`sub-status in words: ${sub}`);
        // the same address through the API with curl: the same verdict
        const c = curl('POST', '/v1/verify', { key, body: { email: addr } });
        expect(pr, 'curl /v1/verify', 200, c.status);
        for (const f of ['status', 'reason', 'sub_status', 'score', 'score_basis', 'did_you_mean', 'role', 'spam_trap', 'catch_all_verdict', 'domain', 'mx', 'provider'])
            expect(pr, `curl's ${f} against the page's`, got[f], c.body[f]);
        expect(pr, 'sub_status', 'mailbox_full', got.sub_status);
        await visit(page, 'verify-result');
    });

    await step('a state change without the CSRF token is refused (403 csrf_token_invalid) and makes nothing', async (pr) => {
        allowed = [['/v1/keys', 403]];
        const r = await page.evaluate(async () => {
            const before = (await (await fetch('/v1/keys')).json()).data.length;
            const res = await fetch('/v1/keys', { method: 'POST', headers: { 'Content-Type': 'application/json' },
                body: JSON.stringify({ name: 'no token', scopes: ['jobs:read'] }) });
            const body = await res.json();
            const after = (await (await fetch('/v1/keys')).json()).data.length;
            return { status: res.status, code: body.error && body.error.code, before, after };
        });
        expect(pr, 'status', 403, r.status);
        expect(pr, 'code', 'csrf_token_invalid', r.code);
        expect(pr, 'keys made', r.before, r.after);
        allowed = [];
    });

    // ---- upload, preview, confirm, progress, results, download, cancel
    let job = null;         // the job uploaded with preview through the page
    let second = null;      // the job uploaded without preview, then cancelled
    let third = null;       // the second preview, whose Confirm is refused (402)
    const go = async (hash, name) => {
        await page.evaluate((x) => { location.hash = x; }, hash);
        await ready(page, name);
    };
    // untilShown(SEL): run svc-worker --once until the page shows SEL (the
    // page polls the API by itself; each pass is followed by a wait for SEL)
    const untilShown = async (sel, what) => {
        for (let i = 0; i < 120; i++) {
            if (await page.$(sel))
                return;
            workerOnce();
            try {
                await page.waitForSelector(sel, { timeout: 4000 });
                return;
            } catch (e) { /* another pass */ }
        }
        throw new Error(`${what}: not shown after 120 worker passes`);
    };

    await step('upload: a file refused without one (in words, on the file picker); a CSV uploaded with preview goes to its preview, computing (202) until the worker computed it', async (pr) => {
        await page.click('nav a[href="#upload"]');
        await ready(page, 'upload');
        await page.click('#upload-submit');
        await page.waitForSelector('#upload-file-error:not(:empty)');
        expect(pr, 'the file picker marked', 'true', await page.$eval('#upload-file', (e) => e.getAttribute('aria-invalid')));
        expect(pr, 'the focus on it', 'upload-file', await page.evaluate(() => document.activeElement.id));
        // a URL that is not https: said next to the URL field
        await page.type('#upload-url', 'http://example.com/list.csv');
        await page.click('#upload-submit');
        await page.waitForSelector('#upload-url-error:not(:empty)');
        expect(pr, 'the URL field marked', 'true', await page.$eval('#upload-url', (e) => e.getAttribute('aria-invalid')));
        // one the API refuses (loopback): its 400 said next to the URL field
        allowed = [['/v1/verify/bulk/upload', 400]];
        await page.$eval('#upload-url', (e) => { e.value = ''; });
        await page.type('#upload-url', 'https://127.0.0.1/list.csv');
        const [bad] = await Promise.all([
            page.waitForResponse((r) => r.url() === BASE + '/v1/verify/bulk/upload' && r.request().method() === 'POST'),
            page.click('#upload-submit'),
        ]);
        expect(pr, 'the API\'s status for a loopback URL', 400, bad.status());
        const badBody = await bad.json();
        await page.waitForFunction(() => document.querySelector('#upload-url-error').dataset.code === 'invalid_source_url');
        const ut = await text(page, '#upload-url-error');
        if (!ut.startsWith('This address cannot be used: ') || !badBody.error.message.endsWith(ut.replace('This address cannot be used: ', '')))
            pr.push(`the API's refusal in words: ${ut} (the API: ${badBody.error.message})`);
        expect(pr, 'the URL field marked', 'true', await page.$eval('#upload-url', (e) => e.getAttribute('aria-invalid')));
        expect(pr, 'nothing said on the form itself', '', await text(page, '#upload-error'));
        await visit(page, 'upload-refused');
        allowed = [];
        await page.$eval('#upload-url', (e) => { e.value = ''; });
        const input = await page.$('#upload-file');
        await input.uploadFile(env('DASH_CSV'));
        await page.waitForFunction(() => /^Chosen: /.test(document.querySelector('#upload-chosen').textContent));
        await page.type('#upload-name', 'from the dashboard');
        // the columns of the file's header offered; the address column chosen
        await page.waitForSelector('#upload-column-field:not([hidden])');
        expect(pr, 'the columns offered', '["email","source"]', await page.$eval('#upload-column', (e) => e.dataset.columns));
        await page.select('#upload-column', 'email');
        expect(pr, 'preview on by default', true, await page.$eval('#upload-preview', (e) => e.checked));
        // (the form's text fields as the page hands them to fetch: the
        // browser does not report a body holding a file)
        await page.evaluate(() => {
            const f = window.fetch;
            window.fetch = (u, o) => {
                if (o && o.body instanceof FormData)
                    window.sentForm = [...o.body.entries()].filter(([, v]) => typeof v === 'string');
                return f(u, o);
            };
        });
        const [res] = await Promise.all([
            page.waitForResponse((r) => r.url() === BASE + '/v1/verify/bulk/upload' && r.request().method() === 'POST'),
            page.click('#upload-submit'),
        ]);
        expect(pr, 'the API\'s status', 202, res.status());
        expect(pr, 'the form\'s fields sent', [['preview', 'true'], ['name', 'from the dashboard'], ['email_column', 'email']],
            await page.evaluate(() => window.sentForm));
        const up = await res.json();
        job = up.job_id;
        expect(pr, 'preview', true, up.preview);
        await ready(page, 'preview');
        expect(pr, 'the address', `${APP}#preview/${job}`, page.url());
        // nothing has run the worker yet: computing, and said so
        expect(pr, 'the page while the preview is computed', 'computing', await page.$eval('#preview-status', (e) => e.dataset.state));
        await page.waitForSelector('#preview-waiting');
        const box = await page.$eval('#preview-status', (e) => e.getBoundingClientRect().height);
        await visit(page, 'preview-computing');
        await untilShown('#preview-chart', 'the preview');
        const box2 = await page.$eval('#preview-status', (e) => e.getBoundingClientRect().height);
        expect(pr, 'the status box kept its height (no jump)', box, box2);
        const c = curl('GET', `/v1/jobs/${job}`, { key });
        expect(pr, 'the job (curl)', 'awaiting_confirmation', c.body.status);
        expect(pr, 'its name', 'from the dashboard', c.body.name);
    });

    await step('the preview as a picture: every figure and 95% range on the page is the API\'s preview (exact), the bar\'s segments its shares', async (pr) => {
        if (!job)
            throw new Error('no job was uploaded');
        const api = curl('POST', `/v1/verify/bulk/${job}/preview`, { key });
        expect(pr, 'curl preview', 200, api.status);
        const p = api.body.preview;
        const shown = await page.$$eval('#preview [data-field]', (els) => Object.fromEntries(els.map((e) => [e.dataset.field, e.dataset.value])));
        const want = {
            total_emails: String(p.total_emails), duplicates_removed: String(p.duplicates_removed),
            estimated_bounce_rate: String(p.estimated_bounce_rate),
            estimated_bounce_rate_interval: JSON.stringify(p.estimated_bounce_rate_interval),
            catch_all_share: String(p.catch_all_share), catch_all_share_interval: JSON.stringify(p.catch_all_share_interval),
            unknown_share: String(p.unknown_share), unknown_share_interval: JSON.stringify(p.unknown_share_interval),
            confidence: p.confidence, credits_needed: String(p.credits_needed),
            estimated_credits_after_refunds: String(p.estimated_credits_after_refunds),
            'smtp_sample.size': String(p.smtp_sample.size),
        };
        for (const k of ['syntax_invalid', 'no_mx', 'disposable', 'role_based', 'suppressed', 'free_provider', 'resolved_without_smtp', 'needs_smtp'])
            want[`free_checks.${k}`] = String(p.free_checks[k]);
        for (const k of ['deliverable', 'risky', 'undeliverable', 'unknown'])
            want[`estimated_by_status.${k}`] = String(p.estimated_by_status[k]);
        const sorted = (o) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
        expect(pr, 'the figures on the page', sorted(want), sorted(shown));
        // the words shown are the same numbers, as percentages
        const pct = (v) => `${(100 * v).toFixed(1)}%`;
        const t = await text(page, '[data-field="estimated_bounce_rate_interval"]');
        expect(pr, 'the bounce rate\'s range in words', `${pct(p.estimated_bounce_rate_interval[0])} to ${pct(p.estimated_bounce_rate_interval[1])}`, t);
        expect(pr, 'the unknown share in words', pct(p.unknown_share), await text(page, '[data-field="unknown_share"]'));
        // the bar: each segment's width is its status's share of the list
        const w = await page.$$eval('#preview-chart .seg', (els) => [els[0].parentElement.clientWidth,
            Object.fromEntries(els.map((e) => [e.dataset.status, e.getBoundingClientRect().width]))]);
        const total = Object.values(p.estimated_by_status).reduce((a, b) => a + b, 0);
        for (const [k, px] of Object.entries(w[1]))
            if (Math.abs(px - (w[0] * p.estimated_by_status[k]) / total) > 1.5)
                pr.push(`segment ${k}: ${px} px of ${w[0]}, for ${p.estimated_by_status[k]} of ${total}`);
        expect(pr, 'segments', 4, Object.keys(w[1]).length);
        await visit(page, 'preview');
    });

    await step('confirm charges credits_needed; the job page shows live progress (bar, processed / total, rate, ETA) to completed while the worker runs', async (pr) => {
        if (!job)
            throw new Error('no job was uploaded');
        const before = curl('GET', '/v1/credits', { key }).body.balance;
        const needed = curl('POST', `/v1/verify/bulk/${job}/preview`, { key }).body.preview.credits_needed;
        const [res] = await Promise.all([
            page.waitForResponse((r) => r.url() === `${BASE}/v1/verify/bulk/${job}/confirm` && r.request().method() === 'POST'),
            page.click('#preview-confirm'),
        ]);
        expect(pr, 'the API\'s status', 200, res.status());
        await ready(page, 'job');
        expect(pr, 'the address', `${APP}#job/${job}`, page.url());
        expect(pr, 'charged', before - needed, curl('GET', '/v1/credits', { key }).body.balance);
        await page.waitForSelector('#job-rate[data-value]');
        const card = () => page.$eval('#job-progress', (e) => e.closest('section').getBoundingClientRect().height);
        const h1 = await card();
        await visit(page, 'job-progress');
        await untilShown('#job-status[data-value="completed"]', 'the job completed');
        expect(pr, 'the progress box kept its height (no jump)', h1, await card());
        const p = curl('GET', `/v1/jobs/${job}/progress`, { key }).body;
        expect(pr, 'processed / total on the page', `${p.processed_emails}/${p.total_emails}`, await page.$eval('#job-count', (e) => e.dataset.value));
        expect(pr, 'the bar', [p.processed_emails, p.total_emails], await page.$eval('#job-progress', (e) => [e.value, e.max]));
        expect(pr, 'the ETA (the API\'s)', p.eta_seconds === null ? 'null' : String(p.eta_seconds), await page.$eval('#job-eta', (e) => e.dataset.value));
        expect(pr, 'the ETA in words once ended', 'None: the job has ended.', await text(page, '#job-eta'));
        expect(pr, 'cancel no longer offered once ended', ['hidden', true],
            await page.$eval('#job-cancel', (e) => [getComputedStyle(e).visibility, e.disabled]));
    });

    await step('results: the table is the API\'s results, page by page and filtered by classification', async (pr) => {
        if (!job)
            throw new Error('no job was uploaded');
        await page.waitForSelector('#results-table');
        const rows = () => page.$$eval('#results-table tbody tr', (trs) => trs.map((tr) => [tr.dataset.email, tr.dataset.classification,
            ...[...tr.querySelectorAll('td[data-value]')].map((td) => td.dataset.value)]));
        const apiRows = (q) => curl('GET', `/v1/jobs/${job}/results?${q}`, { key }).body.results.map((x) => [x.email,
            x.classification, x.status, x.reason, x.sub_status === null ? 'null' : x.sub_status, String(x.score)]);
        expect(pr, 'page 1', apiRows('page=1&limit=10'), await rows());
        await page.click('#results-next');
        await page.waitForSelector('#results-out[data-query="page=2&limit=10"][aria-busy="false"]');
        const p2 = apiRows('page=2&limit=10');
        expect(pr, 'page 2', p2, await rows());
        if (!p2.length)
            pr.push('no second page: the list is too short to test paging');
        await page.select('#results-class', 'invalid');
        await page.waitForSelector('#results-out[data-query="page=1&limit=10&classification=invalid"][aria-busy="false"]');
        const inv = apiRows('page=1&limit=10&classification=invalid');
        expect(pr, 'classification invalid', inv, await rows());
        if (!inv.length || inv.some((r) => r[1] !== 'invalid'))
            pr.push(`the filtered rows: ${JSON.stringify(inv)}`);
        await visit(page, 'job-results');
    });

    await step('download: the links give the five filters and include_original; the undeliverable CSV is byte for byte curl\'s', async (pr) => {
        if (!job)
            throw new Error('no job was uploaded');
        const links = await page.$$eval('#downloads a', (as) => as.map((a) => [a.dataset.filter, a.dataset.original]));
        for (const f of ['all', 'deliverable', 'undeliverable', 'risky', 'unknown', 'send_safe'])
            for (const o of ['false', 'true'])
                if (!links.some((l) => l[0] === f && l[1] === o))
                    pr.push(`no link for ${f}, include_original ${o}`);
        const href = await page.$eval('#downloads a[data-filter="undeliverable"][data-original="false"]', (a) => a.getAttribute('href'));
        expect(pr, 'the link', `/v1/jobs/${job}/download?format=csv&filter=undeliverable`, href);
        const got = await page.evaluate(async (u) => {
            const r = await fetch(u, { credentials: 'same-origin' });
            const b = new Uint8Array(await r.arrayBuffer());
            let s = '';
            for (const x of b) s += String.fromCharCode(x);
            return [r.status, btoa(s)];
        }, href);
        expect(pr, 'the browser\'s download', 200, got[0]);
        const mine = Buffer.from(got[1], 'base64');
        const theirs = curlBytes(href, key);
        if (!mine.equals(theirs))
            pr.push(`the CSVs differ: ${mine.length} bytes in the browser, ${theirs.length} with curl`);
        if (!/^email,svc_status,/.test(theirs.toString('utf8')) || theirs.toString('utf8').split('\n').length < 3)
            pr.push(`curl's CSV: ${theirs.toString('utf8').slice(0, 200)}`);
    });

    await step('a file dropped on the upload box, preview off, goes to its job page; cancel asks first, then cancels (curl agrees)', async (pr) => {
        await go('#upload', 'upload');
        // a drop: a File in a DataTransfer, as the browser gives it
        await page.evaluate((csv) => {
            const dt = new DataTransfer();
            dt.items.add(new File([csv], 'dropped.csv', { type: 'text/csv' }));
            const z = document.querySelector('#upload-drop');
            z.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
            z.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
        }, fs.readFileSync(env('DASH_CSV'), 'utf8'));
        expect(pr, 'the file dropped', 'Chosen: dropped.csv', (await text(page, '#upload-chosen')).replace(/ \(.*/, ''));
        await page.click('#upload-preview');
        const [res] = await Promise.all([
            page.waitForResponse((r) => r.url() === BASE + '/v1/verify/bulk/upload' && r.request().method() === 'POST'),
            page.click('#upload-submit'),
        ]);
        expect(pr, 'the API\'s status', 202, res.status());
        second = (await res.json()).job_id;
        await ready(page, 'job');
        expect(pr, 'the address', `${APP}#job/${second}`, page.url());
        await page.click('#job-cancel');
        await page.waitForSelector('#cancel-dialog[open]');
        expect(pr, 'focus in the dialog on', 'cancel-keep', await page.evaluate(() => document.activeElement.id));
        await visit(page, 'job-cancel-confirm');
        await page.click('#cancel-keep');
        await page.waitForSelector('#cancel-dialog:not([open])');
        expect(pr, 'the job after Keep', false, curl('GET', `/v1/jobs/${second}`, { key }).body.status === 'cancelled');
        await page.click('#job-cancel');
        await page.waitForSelector('#cancel-dialog[open]');
        const [del] = await Promise.all([
            page.waitForResponse((r) => r.url() === `${BASE}/v1/jobs/${second}` && r.request().method() === 'DELETE'),
            page.click('#cancel-confirm'),
        ]);
        expect(pr, 'the API\'s status', 200, del.status());
        await page.waitForSelector('#job-status[data-value="cancelled"]');
        await page.waitForSelector('#job-notice:not(:empty)');
        expect(pr, 'curl', 'cancelled', curl('GET', `/v1/jobs/${second}`, { key }).body.status);
        await visit(page, 'job-cancelled');
    });

    await step('a second preview needing more credits than the account has: Confirm\'s 402 is said in words (needed, available); nothing charged', async (pr) => {
        await go('#upload', 'upload');
        await (await page.$('#upload-file')).uploadFile(env('DASH_CSV'));
        await page.waitForFunction(() => /^Chosen: /.test(document.querySelector('#upload-chosen').textContent));
        const [res] = await Promise.all([
            page.waitForResponse((r) => r.url() === BASE + '/v1/verify/bulk/upload' && r.request().method() === 'POST'),
            page.click('#upload-submit'),
        ]);
        expect(pr, 'the API\'s status', 202, res.status());
        const poor = (await res.json()).job_id;
        third = poor;
        await ready(page, 'preview');
        await untilShown('#preview-chart', 'the second preview');
        const before = curl('GET', '/v1/credits', { key }).body.balance;
        const needed = Number(await page.$eval('[data-field="credits_needed"]', (e) => e.dataset.value));
        if (!(needed > before))
            throw new Error(`the list needs ${needed}, the account has ${before}: no 402 to show`);
        allowed = [[`/v1/verify/bulk/${poor}/confirm`, 402]];
        const [c] = await Promise.all([
            page.waitForResponse((r) => r.url() === `${BASE}/v1/verify/bulk/${poor}/confirm`),
            page.click('#preview-confirm'),
        ]);
        expect(pr, 'the API\'s status', 402, c.status());
        await page.waitForFunction(() => document.querySelector('#confirm-error').dataset.code === 'insufficient_credits');
        const t = await text(page, '#confirm-error');
        if (!t.includes(`needs ${needed}, the account has ${before}`))
            pr.push(`402 in words: ${t}`);
        expect(pr, 'the focus back on Confirm', 'preview-confirm', await page.evaluate(() => document.activeElement.id));
        expect(pr, 'the balance', before, curl('GET', '/v1/credits', { key }).body.balance);
        expect(pr, 'the job', 'awaiting_confirmation', curl('GET', `/v1/jobs/${poor}`, { key }).body.status);
        await visit(page, 'preview-402');
        allowed = [];
    });

    await step('a job seen mid-run (its SMTP sessions held by the fake server): 0 < processed < total on the bar and in numbers as the API says, a rate and an ETA; the boxes keep their size between two updates; then completed', async (pr) => {
        const { spawn } = require('node:child_process');
        const net = require('node:net');
        const [fakeHost, fakePort] = env('DASH_FAKE_CTL').split(' ');
        // fakeSet(K=V): a setting of the fake SMTP server (its control port)
        const fakeSet = (kv) => new Promise((resolve, reject) => {
            const c = net.createConnection({ host: fakeHost, port: Number(fakePort) }, () => c.write(`set ${kv}\n`));
            let got = '';
            c.on('data', (d) => { got += d; if (got.endsWith('\n')) { c.end(); resolve(got.trim()); } });
            c.on('error', reject);
        });
        // (x1 and x2 were in the first list too: verified twice, for the
        // accuracy report's stability)
        const emails = ['x1@nosuch.svc.test', 'x2@nosuch.svc.test', 'mid3@nosuch.svc.test', 'held1@pristine.svc.test', 'held2@pristine.svc.test'];
        const balance = curl('GET', '/v1/credits', { key }).body.balance;
        if (balance < emails.length)
            throw new Error(`${balance} credits left: not enough for the held job`);
        expect(pr, 'the fake server holds', 'ok', await fakeSet('hold=1'));
        const made = curl('POST', '/v1/verify/bulk', { key, body: { emails, name: 'held mid-run' } });
        expect(pr, 'the job made (curl)', 202, made.status);
        const held = made.body.job_id;
        const fd = fs.openSync(env('DASH_WORKER_LOG'), 'a');
        const worker = spawn('timeout', ['120', env('DASH_WORKER'), '-c', env('DASH_CONF'), '--once'], { stdio: ['ignore', fd, fd] });
        const exited = new Promise((resolve) => worker.on('exit', (code) => resolve(code)));
        let released = false;
        try {
            await go(`#job/${held}`, 'job');
            // the rows at nosuch.svc.test are written while the sessions at
            // pristine.svc.test wait: the page shows the job part done
            const n = emails.length;
            await page.waitForFunction((t) => {
                const m = /^(\d+)\/(\d+)$/.exec(document.querySelector('#job-count').dataset.value || '');
                return m && Number(m[2]) === t && Number(m[1]) > 0 && Number(m[1]) < t &&
                    document.querySelector('#job-eta').dataset.value !== 'null';
            }, { timeout: 60000 }, n);
            const p = curl('GET', `/v1/jobs/${held}/progress`, { key }).body;
            const shownNow = await page.$eval('#job-count', (e) => e.dataset.value);
            expect(pr, 'processed / total on the page (the API\'s)', `${p.processed_emails}/${p.total_emails}`, shownNow);
            if (!(p.processed_emails > 0 && p.processed_emails < p.total_emails))
                pr.push(`the API's progress is not mid-run: ${JSON.stringify(p)}`);
            expect(pr, 'the bar', [p.processed_emails, p.total_emails], await page.$eval('#job-progress', (e) => [e.value, e.max]));
            const live = await page.$eval('#job-rate', (e) => [Number(e.dataset.value), e.textContent]);
            if (!(live[0] > 0) || !/ addresses a minute$/.test(live[1]))
                pr.push(`the rate: ${live}`);
            const eta = await page.$eval('#job-eta', (e) => [Number(e.dataset.value), e.textContent]);
            if (!(eta[0] > 0) || !/^About \d+ (seconds?|minutes?|hours?)$/.test(eta[1]))
                pr.push(`the ETA: ${eta}`);
            expect(pr, 'the status', 'processing', await page.$eval('#job-status', (e) => e.dataset.value));
            // no layout jump: the bar's box, the numbers' and the card's
            // stay the same from one update to the next
            const boxes = () => page.evaluate(() => ['#job-progress', '#job-count', '#job-eta'].map((q) => {
                const r = document.querySelector(q).getBoundingClientRect();
                return [q, r.x, r.y, r.width, r.height];
            }).concat([['card', document.querySelector('#job-progress').closest('section').getBoundingClientRect().height]]));
            const u = Number(await page.$eval('#job-count', (e) => e.dataset.updates));
            const b1 = await boxes();
            await page.waitForFunction((x) => Number(document.querySelector('#job-count').dataset.updates) > x, {}, u);
            expect(pr, 'the boxes between two updates', b1, await boxes());
            await visit(page, 'job-mid-run');
            expect(pr, 'the fake server releases', 'ok', await fakeSet('hold=0'));
            released = true;
            await page.waitForSelector('#job-status[data-value="completed"]', { timeout: 120000 });
            expect(pr, 'the worker\'s exit', 0, await exited);
            const end = curl('GET', `/v1/jobs/${held}/progress`, { key }).body;
            expect(pr, 'the page at the end', [`${n}/${n}`, 'completed'], [await page.$eval('#job-count', (e) => e.dataset.value), end.status]);
        } finally {
            if (!released)
                await fakeSet('hold=0').catch(() => {});
            await exited;
            fs.closeSync(fd);
        }
    });

    await step('accuracy (issue 29): after feedback on the jobs\' addresses, the report\'s tables, unknown share and stability are the API\'s for the times chosen; a bad range is said on its field', async (pr) => {
        if (!job)
            throw new Error('no job was uploaded');
        const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
        const fb = curl('POST', '/v1/feedback', { key, body: { events: [
            { email: 'nobody2@mx.svc.test', outcome: 'hard_bounce', occurred_at: at, smtp_code: 550, enhanced_code: '5.1.1', event_id: 'dash-1' },
            { email: 'info@mx.svc.test', outcome: 'delivered', occurred_at: at, event_id: 'dash-2' },
            { email: 'x1@nosuch.svc.test', outcome: 'soft_bounce', occurred_at: at, event_id: 'dash-3' },
            { email: 'z@throwaway.svc.test', outcome: 'complaint', occurred_at: at, event_id: 'dash-4' }] } });
        expect(pr, 'POST /v1/feedback', [200, 4], [fb.status, fb.body && fb.body.accepted]);
        await page.click('nav a[href="#accuracy"]');
        await ready(page, 'accuracy');
        const shown = async () => {
            await page.waitForSelector('#accuracy-out[aria-busy="false"]');
            const q = await page.$eval('#accuracy-out', (e) => e.dataset.query);
            const table = (id) => page.$$eval(`#${id} tbody tr`, (trs) => Object.fromEntries(trs.map((tr) => [tr.dataset.name,
                Object.fromEntries([...tr.querySelectorAll('td')].map((td) => [td.dataset.key, Number(td.dataset.value)]))])));
            return { q, classes: await table('accuracy-classes'), providers: await page.$('#accuracy-providers') ? await table('accuracy-providers') : {},
                unknown: Number(await page.$eval('#accuracy-unknown', (e) => e.dataset.value)),
                stability: await page.$eval('#accuracy-stability', (e) => [Number(e.dataset.twice), Number(e.dataset.same), Number(e.dataset.value)]) };
        };
        const keys = ['verified', 'delivered', 'hard_bounce', 'soft_bounce', 'complaint', 'no_outcome'];
        const pick = (o) => Object.fromEntries(Object.entries(o).map(([k, t]) => [k, Object.fromEntries(keys.map((x) => [x, t[x]]))]));
        const against = (got, what) => {
            const api = curl('GET', `/v1/reports/accuracy?${got.q}`, { key });
            expect(pr, `${what}: curl /v1/reports/accuracy?${got.q}`, 200, api.status);
            const r = api.body;
            expect(pr, `${what}: by classification`, pick(r.by_classification), got.classes);
            expect(pr, `${what}: by provider`, pick(r.by_provider), got.providers);
            expect(pr, `${what}: unknown share`, r.unknown_share, got.unknown);
            expect(pr, `${what}: stability`, [r.stability.addresses_verified_twice, r.stability.same_classification, r.stability.share_same], got.stability);
            return r;
        };
        const r = against(await shown(), 'the last 30 days');
        // (x1's soft bounce counts for both its results: it came after each)
        expect(pr, 'the outcomes reported, in the report', [1, 1, 2, 1], [r.total.delivered, r.total.hard_bounce, r.total.soft_bounce, r.total.complaint]);
        expect(pr, 'the jobs\' results in it', true, r.total.verified >= 12 + 5);
        // x1 and x2, in the first list and in the job seen mid-run: invalid both times
        expect(pr, 'stability: addresses verified twice, the same classification', [2, 2],
            [r.stability.addresses_verified_twice, r.stability.same_classification]);
        // the times chosen in the user's zone are sent as UTC: a window
        // that ended before the job has none of its results
        // (the value of a datetime-local input in the browser's zone)
        const local = (d) => page.evaluate((ms) => {
            const x = new Date(ms);
            const p = (n) => String(n).padStart(2, '0');
            return `${x.getFullYear()}-${p(x.getMonth() + 1)}-${p(x.getDate())}T${p(x.getHours())}:${p(x.getMinutes())}`;
        }, d.getTime());
        const t0 = new Date(Date.now() - 3 * 3600000), t1 = new Date(Date.now() - 2 * 3600000);
        await page.$eval('#accuracy-since', (e, v) => { e.value = v; }, await local(t0));
        await page.$eval('#accuracy-until', (e, v) => { e.value = v; }, await local(t1));
        const [res] = await Promise.all([
            page.waitForResponse((x) => x.url().startsWith(`${BASE}/v1/reports/accuracy?`)),
            page.click('#accuracy-submit'),
        ]);
        const sent = new URL(res.url()).searchParams;
        const iso = (d) => { const x = new Date(d); x.setSeconds(0, 0); return x.toISOString().replace(/\.000Z$/, 'Z'); };
        expect(pr, 'the times sent (UTC of the zone\'s)', [iso(t0), iso(t1)], [sent.get('since'), sent.get('until')]);
        await page.waitForSelector(`#accuracy-out[data-query="since=${iso(t0)}&until=${iso(t1)}"]`);
        const before = against(await shown(), 'two hours before the job');
        expect(pr, 'results in the window before the job', 0, before.total.verified);
        // since after until: the API's 400 said next to "from"
        allowed = [['/v1/reports/accuracy', 400]];
        await page.$eval('#accuracy-since', (e, v) => { e.value = v; }, await local(t1));
        await page.$eval('#accuracy-until', (e, v) => { e.value = v; }, await local(t0));
        await page.click('#accuracy-submit');
        await page.waitForSelector('#accuracy-error:not(:empty)');
        const et = await text(page, '#accuracy-error');
        if (!/since: must be before until/.test(et))
            pr.push(`the refusal in words: ${et}`);
        expect(pr, 'the field marked and focused', ['true', 'accuracy-since'],
            [await page.$eval('#accuracy-since', (e) => e.getAttribute('aria-invalid')), await page.evaluate(() => document.activeElement.id)]);
        await visit(page, 'accuracy-refused');
        allowed = [];
        await page.$eval('#accuracy-since', (e, v) => { e.value = v; }, await local(new Date(Date.now() - 86400000)));
        await page.$eval('#accuracy-until', (e, v) => { e.value = v; }, await local(new Date(Date.now() + 120000)));
        await page.click('#accuracy-submit');
        await page.waitForSelector('#accuracy-error:empty');
        against(await shown(), 'the last day');
        await visit(page, 'accuracy');
    });

    await step('a list uploaded by its https:// address through the page: 202, its preview page; the worker downloads it (the file server saw the request) and the preview counts its rows', async (pr) => {
        const src = env('DASH_SOURCE_URL');
        await go('#upload', 'upload');
        await page.type('#upload-url', src);
        expect(pr, 'preview on', true, await page.$eval('#upload-preview', (e) => e.checked));
        const [res] = await Promise.all([
            page.waitForResponse((r) => r.url() === BASE + '/v1/verify/bulk/upload' && r.request().method() === 'POST'),
            page.click('#upload-submit'),
        ]);
        expect(pr, 'the API\'s status', 202, res.status());
        expect(pr, 'what the page sent', { source_url: src, preview: true }, JSON.parse(res.request().postData() || 'null'));
        const fromUrl = (await res.json()).job_id;
        await ready(page, 'preview');
        expect(pr, 'the address', `${APP}#preview/${fromUrl}`, page.url());
        await untilShown('#preview-chart', 'the preview of the list at the URL');
        const path = new URL(src).pathname;
        const served = fs.readFileSync(env('DASH_SERVED'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
        expect(pr, 'requests for the file at the file server', 1, served.filter((x) => x.path === path).length);
        const api = curl('POST', `/v1/verify/bulk/${fromUrl}/preview`, { key });
        expect(pr, 'the job (curl)', [200, 'awaiting_confirmation', 7], [api.status, api.body.status, api.body.preview && api.body.preview.total_emails]);
        expect(pr, 'the rows on the page', '7', await page.$eval('[data-field="total_emails"]', (e) => e.dataset.value));
        await visit(page, 'preview-url');
    });

    await step('jobs: the list is the API\'s, and its status filter too', async (pr) => {
        await page.click('nav a[href="#jobs"]');
        await ready(page, 'jobs');
        const ids = () => page.$$eval('#jobs-table tbody tr', (trs) => trs.map((tr) => [tr.dataset.jobId, tr.dataset.status]));
        const apiIds = (q) => curl('GET', `/v1/jobs?limit=50${q}`, { key }).body.data.map((j) => [j.job_id, j.status]);
        expect(pr, 'every job', apiIds(''), await ids());
        // a job not ended (the one awaiting confirmation): its rate and ETA from /progress
        if (third) {
            const p = curl('GET', `/v1/jobs/${third}/progress`, { key }).body;
            expect(pr, 'rate and ETA of the job awaiting confirmation', [String(p.rate_per_minute), p.eta_seconds === null ? 'null' : String(p.eta_seconds)],
                await page.$eval(`tr[data-job-id="${third}"] .live`, (e) => [e.dataset.rate, e.dataset.eta]));
        }
        await page.select('#jobs-status', 'cancelled');
        await page.waitForSelector('#jobs-out[data-filter="cancelled"]');
        const c = apiIds('&status=cancelled');
        expect(pr, 'cancelled jobs', c, await ids());
        if (!c.some((x) => x[0] === second))
            pr.push('the cancelled job is not listed');
        await page.select('#jobs-status', 'completed');
        await page.waitForSelector('#jobs-out[data-filter="completed"]');
        expect(pr, 'completed jobs', apiIds('&status=completed'), await ids());
        await visit(page, 'jobs');
    });

    await step('another account\'s job id in the address gives "not found" (job and preview pages)', async (pr) => {
        const other = env('DASH_OTHER_JOB');
        allowed = [[`/v1/jobs/${other}`, 404], [`/v1/verify/bulk/${other}/preview`, 404]];
        await go(`#job/${other}`, 'job');
        expect(pr, 'the job page', true, /^Not found/.test(await text(page, '#not-found')));
        await visit(page, 'job-not-found');
        await go(`#preview/${other}`, 'preview');
        expect(pr, 'the preview page', true, /^Not found/.test(await text(page, '#not-found')));
        allowed = [];
    });

    await step('sign-out returns to the sign-in form; the old cookie is refused by the API', async (pr) => {
        if (!cookie)
            throw new Error('never signed in');
        expect(pr, 'the cookie before sign-out', 200, curl('GET', '/v1/session', { cookie }).status);
        const [res] = await Promise.all([
            page.waitForResponse((r) => r.url() === BASE + '/v1/session' && r.request().method() === 'DELETE'),
            page.click('#signout'),
        ]);
        expect(pr, 'the API\'s status', 200, res.status());
        await ready(page, 'signin');
        expect(pr, 'notice', 'You have signed out.', await text(page, '#signin-notice'));
        const r = curl('GET', '/v1/session', { cookie });
        expect(pr, 'GET /v1/session with the old cookie', 401, r.status);
        expect(pr, 'its code', 'unauthorized', r.body && r.body.error && r.body.error.code);
        const jar = await page.cookies(BASE);
        expect(pr, 'the cookie in the browser', undefined, jar.find((x) => x.name === 'svc_session'));
        await visit(page, 'signed-out');
    });

    await step('an invitation link sets the password once (the token leaves the address); then sign-in with it works', async (pr) => {
        allowed = [['/v1/session', 401], ['/v1/session/invite', 401]];
        const link = env('DASH_INVITE');
        await page.goto(link);
        await ready(page, 'invite');
        expect(pr, 'the address after reading the token', BASE + '/app/invite', page.url());
        await visit(page, 'invite');
        await page.type('#invite-password', 'the invited password 1');
        await page.type('#invite-confirm', 'the invited password 2');
        await page.click('#invite-submit');
        await page.waitForSelector('#invite-error:not(:empty)');
        expect(pr, 'two different passwords', 'The two passwords are not the same.', await text(page, '#invite-error'));
        await page.$eval('#invite-confirm', (e) => { e.value = ''; });
        await page.type('#invite-confirm', 'the invited password 1');
        const [res] = await Promise.all([
            page.waitForResponse((r) => r.url() === BASE + '/v1/session/invite'),
            page.click('#invite-submit'),
        ]);
        expect(pr, 'the API\'s status', 200, res.status());
        await page.waitForSelector('#invite-done');
        await visit(page, 'invite-done');
        // the same link again: refused, in words
        await page.goto(link);
        await ready(page, 'invite');
        await page.type('#invite-password', 'another password 3');
        await page.type('#invite-confirm', 'another password 3');
        await page.click('#invite-submit');
        await page.waitForFunction(() => document.querySelector('#invite-error').dataset.code === 'invalid_invitation');
        const t = await text(page, '#invite-error');
        if (!/unknown, already used or expired/.test(t))
            pr.push(`a used link: ${t}`);
        // sign in with the password chosen
        await page.goto(APP);
        await ready(page, 'signin');
        await page.type('#signin-email', env('DASH_INVITE_EMAIL'));
        await page.type('#signin-password', 'the invited password 1');
        const [r2] = await Promise.all([
            page.waitForResponse((r) => r.url() === BASE + '/v1/session' && r.request().method() === 'POST'),
            page.click('#signin-submit'),
        ]);
        expect(pr, 'sign-in with the password chosen', 201, r2.status());
        await ready(page, 'overview');
    });

    report('no console errors on any page (only the API refusals the steps provoked)', consoleProblems);
    report('axe-core: no serious or critical violation on any page; every control has a label', axeProblems);
    report('every page fits a phone-sized screen (390 px) without sideways scrolling', phoneProblems);
}

main().then(() => {
    process.exitCode = results.every(Boolean) && !failedBefore ? 0 : 1;
}, (e) => {
    console.log(`not ok - the browser ran the steps\n#   ${e && e.stack ? e.stack : e}`);
    process.exitCode = 1;
});
