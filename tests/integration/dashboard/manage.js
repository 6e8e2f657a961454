// manage.js: the browser test of the dashboard's webhooks and suppressions
// pages, run by test_dashboard_manage.sh (which starts the stack, a running
// svc-worker and an HTTPS webhook receiver, and reads this script's
// "ok - NAME" / "not ok - NAME" lines as its cases). The pages are driven
// in headless Chromium (browser.js); curl, as an API client would, checks
// what they did, and the receiver's log what svc-worker sent.
//
// Environment (besides browser.js's): DASH_EMAIL, DASH_PASSWORD, DASH_KEY
// (an API key of that account, every scope), DASH_RECEIVER (the receiver's
// https://127.0.0.1:PORT), DASH_RECEIVED (its log: a JSON line a request),
// DASH_DB_SOCKET (the test's MariaDB, to age a rotated secret), DASH_FILES
// (a folder for the files the page imports), DASH_SANDBOX (the sandbox
// domain: the addresses of the jobs whose events fill the delivery log).
'use strict';
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const {
    env, BASE, APP, TZ, state, results, report, step, expect, curl,
    consoleProblems, axeProblems, phoneProblems, ready, visit, text, launch,
} = require('./browser.js');

let allowed = [];       // API refusals the running step provokes: [path, status]
const key = env('DASH_KEY');

// ---- the receiver's log
// received(PATH): the requests the receiver got on PATH, oldest first
function received(p) {
    let lines = [];
    try {
        lines = fs.readFileSync(env('DASH_RECEIVED'), 'utf8').split('\n');
    } catch (e) {
        return [];
    }
    lines.pop();        // (a line being written, or the '' after the last)
    return lines.filter(Boolean).map((l) => JSON.parse(l)).filter((r) => r.path === p);
}
// receivedNth(PATH, N): the N-th request to PATH, once it came (60 s at
// most)
async function receivedNth(p, n) {
    for (let i = 0; i < 600; i++) {
        const r = received(p);
        if (r.length >= n)
            return r[n - 1];
        await new Promise((res) => setTimeout(res, 100));
    }
    throw new Error(`the receiver got ${received(p).length} requests on ${p}, not ${n}, in 60 s`);
}
// signers(REQUEST, SECRETS): which of SECRETS sign the request: the v1 of
// X-Service-Signature that HMAC-SHA256(secret, "t.body") gives (API.md)
function signers(r, secrets) {
    const sig = r.headers['x-service-signature'] || '';
    const t = (/(?:^|,)t=(\d+)/.exec(sig) || [])[1];
    const v1 = [...sig.matchAll(/(?:^|,)v1=([0-9a-f]+)/g)].map((m) => m[1]);
    const body = Buffer.from(r.body_b64, 'base64');
    return {
        count: v1.length,
        by: secrets.map((s) => v1.includes(crypto.createHmac('sha256', s)
            .update(Buffer.concat([Buffer.from(`${t}.`), body])).digest('hex'))),
    };
}

function sql(q) {
    return execFileSync('mariadb', ['--no-defaults', `--socket=${env('DASH_DB_SOCKET')}`, '--user=root', '-N', '-B', 'svc', '-e', q],
        { encoding: 'utf8' }).trim();
}

// zoneProblems(PAGE, SEL): a <time> under SEL must read in the emulated
// zone (and not as UTC), its datetime the ISO time WANT
async function zoneProblems(pr, page, sel, want) {
    const t = await page.$eval(sel, (el) => {
        const opts = { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit',
            second: '2-digit', timeZoneName: 'short' };
        const d = new Date(el.dateTime);
        return [el.textContent, el.dateTime, new Intl.DateTimeFormat(undefined, { ...opts, timeZone: 'UTC' }).format(d),
            new Intl.DateTimeFormat(undefined, opts).format(d), Intl.DateTimeFormat().resolvedOptions().timeZone];
    });
    expect(pr, `${sel}: the page's zone`, TZ, t[4]);
    expect(pr, `${sel}: the time shown in the user's zone`, t[3], t[0]);
    if (t[0] === t[2])
        pr.push(`${sel}: the time reads as UTC: ${t[0]}`);
    if (want !== undefined)
        expect(pr, `${sel}: the time is the API's`, new Date(want).toISOString(), t[1]);
}

const go = async (page, hash, name) => {
    await page.evaluate((x) => { location.hash = x; }, hash);
    await ready(page, name);
};
// answer(PAGE, METHOD, PATH, ACTION): the response to that request ACTION makes
async function answer(page, method, p, action) {
    const [res] = await Promise.all([
        page.waitForResponse((r) => r.url().split('?')[0] === BASE + p && r.request().method() === method),
        action(),
    ]);
    return res;
}

async function run(page) {
    const email = env('DASH_EMAIL');
    const receiver = env('DASH_RECEIVER');
    const hookPath = '/hook/page';
    let hook = null;        // POST /v1/webhooks's answer (the page's webhook)
    let secret = null;      // its first secret, as the page showed it
    let secret2 = null;     // the one after rotation
    const tests = [];       // the event ids of the tests sent, in order

    await step('sign in with the e-mail address and password', async (pr) => {
        allowed = [['/v1/session', 401]];
        await page.goto(APP);
        await ready(page, 'signin');
        await page.type('#signin-email', email);
        await page.type('#signin-password', env('DASH_PASSWORD'));
        const res = await answer(page, 'POST', '/v1/session', () => page.click('#signin-submit'));
        expect(pr, 'sign-in', 201, res.status());
        await ready(page, 'overview');
        allowed = [];
    });

    // ---- webhooks
    await step('webhooks: the page is in the menu, says there are none, and offers the events the API knows', async (pr) => {
        await page.click('nav a[href="#webhooks"]');
        await ready(page, 'webhooks');
        expect(pr, 'the title', 'Webhooks — svc dashboard', await page.title());
        expect(pr, 'the menu marks the page', 'page', await page.$eval('nav a[href="#webhooks"]', (a) => a.getAttribute('aria-current')));
        expect(pr, 'no webhook yet', 'This account has no webhooks yet.', await text(page, '#webhooks-empty'));
        const doc = curl('GET', '/v1/openapi.json');
        const known = doc.body.components.schemas.WebhookEventName.enum.slice().sort();
        const offered = await page.$$eval('#webhook-form input[name="events"]', (bs) => bs.map((b) => [b.value, b.checked]));
        expect(pr, 'the events offered', known, offered.map((x) => x[0]).sort());
        expect(pr, 'all chosen at first', offered.map(() => true), offered.map((x) => x[1]));
        await visit(page, 'webhooks-empty');
    });

    await step('webhooks: a URL the API refuses is said in words next to the form, the field marked', async (pr) => {
        allowed = [['/v1/webhooks', 400]];
        await page.type('#webhook-url', 'ftp://127.0.0.1/hook');
        const res = await answer(page, 'POST', '/v1/webhooks', () => page.click('#webhook-create'));
        expect(pr, 'the API\'s status', 400, res.status());
        const b = await res.json();
        await page.waitForSelector('#webhook-create-error:not(:empty)');
        const t = await text(page, '#webhook-create-error');
        if (!t.startsWith('The webhook was not created: ') || !t.includes(b.error.message))
            pr.push(`the refusal in words: ${t}`);
        expect(pr, 'the URL field marked', 'true', await page.$eval('#webhook-url', (e) => e.getAttribute('aria-invalid')));
        expect(pr, 'the focus on it', 'webhook-url', await page.evaluate(() => document.activeElement.id));
        expect(pr, 'nothing made', 0, curl('GET', '/v1/webhooks', { key }).body.data.length);
        await visit(page, 'webhook-refused');
        allowed = [];
    });

    await step('webhooks: one made with a URL, events and a description; its secret is shown once, the API lists it', async (pr) => {
        await page.$eval('#webhook-url', (e) => { e.value = ''; });
        await page.type('#webhook-url', receiver + hookPath);
        await page.click('#event-job_failed');
        await page.type('#webhook-description', 'made by the browser test');
        const res = await answer(page, 'POST', '/v1/webhooks', () => page.click('#webhook-create'));
        expect(pr, 'the API\'s status', 201, res.status());
        hook = await res.json();
        await page.waitForSelector('#webhook-secret');
        secret = await page.$eval('#webhook-secret', (e) => e.value);
        expect(pr, 'the secret shown is the API\'s', hook.secret, secret);
        if (!/^whsec_/.test(secret))
            pr.push(`the secret: ${secret}`);
        expect(pr, 'the focus on the secret\'s title', 'webhook-secret-title', await page.evaluate(() => document.activeElement.id));
        const api = curl('GET', `/v1/webhooks/${hook.id}`, { key });
        expect(pr, 'the API\'s url', receiver + hookPath, api.body.url);
        expect(pr, 'the API\'s events', ['job.completed'], api.body.events);
        expect(pr, 'the API\'s description', 'made by the browser test', api.body.description);
        if (api.text.includes(secret))
            pr.push('GET /v1/webhooks/ID shows the secret');
        await page.waitForSelector(`#webhooks-table tr[data-webhook-id="${hook.id}"]`);
        // the copy button puts it on the clipboard
        await page.browserContext().overridePermissions(BASE, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
        await page.click('#webhook-secret-copy');
        await page.waitForSelector('#webhook-secret-copied:not(:empty)');
        expect(pr, 'the copy button\'s word', 'Copied to the clipboard.', await text(page, '#webhook-secret-copied'));
        expect(pr, 'the clipboard', secret, await page.evaluate(async () => {
            try { return await navigator.clipboard.readText(); } catch (e) { return `unreadable: ${e.message}`; }
        }));
        await visit(page, 'webhook-new-secret');
        await page.click('#webhook-secret-done');
        expect(pr, 'the secret gone from the page', false, await page.evaluate((s) => document.body.innerHTML.includes(s), secret));
        await go(page, '#overview', 'overview');
        await go(page, '#webhooks', 'webhooks');
        expect(pr, 'not shown again, nor kept in the browser\'s storage', false, await page.evaluate((s) => document.body.innerHTML.includes(s)
            || [...document.querySelectorAll('input')].some((i) => i.value === s)
            || JSON.stringify({ ...localStorage }).includes(s) || JSON.stringify({ ...sessionStorage }).includes(s), secret));
        const row = await page.$eval(`#webhooks-table tr[data-webhook-id="${hook.id}"]`, (tr) => tr.textContent);
        if (!row.includes(receiver + hookPath) || !row.includes('job.completed') || row.includes('job.failed'))
            pr.push(`the row: ${row}`);
        await zoneProblems(pr, page, `#webhooks-table tr[data-webhook-id="${hook.id}"] td[data-label="Created"] time`, api.body.created_at);
        await visit(page, 'webhooks');
    });

    await step('webhooks: a test event sent from the list reaches the receiver, signed with the secret shown', async (pr) => {
        if (!hook)
            throw new Error('no webhook made');
        const res = await answer(page, 'POST', `/v1/webhooks/${hook.id}/test`,
            () => page.click(`#webhooks-table tr[data-webhook-id="${hook.id}"] button.test`));
        expect(pr, 'the API\'s status', 202, res.status());
        const t = await res.json();
        tests.push(t.event_id);
        await page.waitForSelector(`#test-status-${hook.id} a[href="#webhook/${hook.id}"]`);
        const r = await receivedNth(hookPath, 1);
        const body = JSON.parse(Buffer.from(r.body_b64, 'base64').toString());
        expect(pr, 'the event', 'webhook.test', body.event);
        expect(pr, 'its event_id', t.event_id, body.event_id);
        expect(pr, 'X-Webhook-ID', hook.id, r.headers['x-webhook-id']);
        const s = signers(r, [secret]);
        expect(pr, 'signatures', 1, s.count);
        expect(pr, 'signed with the secret the page showed', [true], s.by);
        expect(pr, 'a wrong secret does not check', [false], signers(r, [secret + 'x']).by);
    });

    await step('webhooks: the delivery log shows the test delivered, as the API has it, times in the user\'s zone', async (pr) => {
        await page.click(`#webhooks-table tr[data-webhook-id="${hook.id}"] a.log`);
        await ready(page, 'webhook');
        expect(pr, 'the address', `${APP}#webhook/${hook.id}`, page.url());
        expect(pr, 'the URL shown', receiver + hookPath, await text(page, '#log-url'));
        // (the page follows a delivery on its way by itself)
        const sel = `#deliveries-table tr[data-event-id="${tests[0]}"][data-status="delivered"]`;
        await page.waitForSelector(sel, { timeout: 60000 });
        const api = curl('GET', `/v1/webhooks/${hook.id}/deliveries`, { key }).body;
        const d = api.data.find((x) => x.event_id === tests[0]);
        expect(pr, 'the API\'s status', 'delivered', d && d.status);
        expect(pr, 'rows', api.total, await page.$$eval('#deliveries-table tbody tr', (trs) => trs.length));
        expect(pr, 'attempts', String(d.attempts), await page.$eval(sel, (tr) => tr.dataset.attempts));
        expect(pr, 'the last answer', `HTTP ${d.last_status_code}`, await text(page, `${sel} td[data-label="Last answer"]`));
        expect(pr, 'in words', 'delivered', await text(page, `${sel} td[data-label="Status"]`));
        await zoneProblems(pr, page, `${sel} td[data-label="Created"] time`, d.created_at);
        await zoneProblems(pr, page, `${sel} td[data-label="Finished"] time`, d.finished_at);
        await visit(page, 'webhook-log');
    });

    await step('webhooks: rotating the secret asks first (Cancel changes nothing); then the new one is shown once', async (pr) => {
        await go(page, '#webhooks', 'webhooks');
        const row = `#webhooks-table tr[data-webhook-id="${hook.id}"]`;
        await page.click(`${row} button.rotate`);
        await page.waitForSelector('#rotate-dialog[open]');
        expect(pr, 'the focus on Cancel', 'rotate-dialog-cancel', await page.evaluate(() => document.activeElement.id));
        await visit(page, 'webhook-rotate-confirm');
        await page.keyboard.press('Enter');
        await page.waitForSelector('#rotate-dialog:not([open])');
        expect(pr, 'nothing rotated after Cancel', null, curl('GET', `/v1/webhooks/${hook.id}`, { key }).body.previous_secret_expires_at);
        await page.click(`${row} button.rotate`);
        await page.waitForSelector('#rotate-dialog[open]');
        const res = await answer(page, 'POST', `/v1/webhooks/${hook.id}/rotate-secret`, () => page.click('#rotate-dialog-confirm'));
        expect(pr, 'the API\'s status', 200, res.status());
        const r = await res.json();
        await page.waitForSelector('#webhook-secret');
        secret2 = await page.$eval('#webhook-secret', (e) => e.value);
        expect(pr, 'the focus on the new secret\'s title', 'webhook-secret-title', await page.evaluate(() => document.activeElement.id));
        expect(pr, 'the new secret shown is the API\'s', r.secret, secret2);
        if (secret2 === secret)
            pr.push('the same secret again');
        await zoneProblems(pr, page, '#webhook-secret-until time', r.previous_secret_expires_at);
        await visit(page, 'webhook-rotated');
        await page.click('#webhook-secret-done');
        await go(page, '#overview', 'overview');
        await go(page, '#webhooks', 'webhooks');
        expect(pr, 'the new secret not shown again', false, await page.evaluate((x) => document.documentElement.outerHTML.includes(x)
            || [...document.querySelectorAll('input')].some((i) => i.value === x), secret2));
        const hint = await text(page, `${row} td[data-label="Status"]`);
        if (!hint.includes('Previous secret signs until'))
            pr.push(`the row's status: ${hint}`);
    });

    await step('webhooks: after rotation both secrets sign for 24 h; once they are over only the new one does', async (pr) => {
        await go(page, `#webhook/${hook.id}`, 'webhook');
        let res = await answer(page, 'POST', `/v1/webhooks/${hook.id}/test`, () => page.click('#log-test'));
        expect(pr, 'the second test', 202, res.status());
        tests.push((await res.json()).event_id);
        let r = await receivedNth(hookPath, 2);
        let s = signers(r, [secret, secret2]);
        expect(pr, 'signatures in the 24 h', 2, s.count);
        expect(pr, 'old and new sign', [true, true], s.by);
        await page.waitForSelector(`#deliveries-table tr[data-event-id="${tests[1]}"][data-status="delivered"]`, { timeout: 60000 });
        // the 24 h over (as test_webhooks.sh does it)
        sql(`UPDATE webhook_secrets SET expires_at = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE webhook_id = '${hook.id}' AND secret = '${secret}'`);
        res = await answer(page, 'POST', `/v1/webhooks/${hook.id}/test`, () => page.click('#log-test'));
        expect(pr, 'the third test', 202, res.status());
        tests.push((await res.json()).event_id);
        r = await receivedNth(hookPath, 3);
        s = signers(r, [secret, secret2]);
        expect(pr, 'signatures after the 24 h', 1, s.count);
        expect(pr, 'only the new one signs', [false, true], s.by);
        await page.waitForSelector(`#deliveries-table tr[data-event-id="${tests[2]}"][data-status="delivered"]`, { timeout: 60000 });
        expect(pr, 'the log\'s rows', 3, await page.$$eval('#deliveries-table tbody tr', (trs) => trs.length));
    });

    await step('webhooks: jobs\' job.completed events fill the log past a page: the older page is the API\'s, with links to the jobs', async (pr) => {
        // 8 bulk jobs of a sandbox address each: 11 deliveries in all
        const jobs = [];
        for (let i = 0; i < 8; i++) {
            const r = curl('POST', '/v1/verify/bulk', { key, body: { emails: [`accepted_email@${env('DASH_SANDBOX')}`] } });
            expect(pr, `job ${i + 1}`, 202, r.status);
            jobs.push(r.body.job_id);
        }
        const last = await receivedNth(hookPath, 11);
        expect(pr, 'the 11th request', 'job.completed', JSON.parse(Buffer.from(last.body_b64, 'base64').toString()).event);
        await page.click('#log-refresh');
        await page.waitForSelector('#deliveries-out[data-total="11"][aria-busy="false"]');
        expect(pr, 'the first page', 'Page 1 of 2', await text(page, '#log-page'));
        expect(pr, 'its rows', 10, await page.$$eval('#deliveries-table tbody tr', (trs) => trs.length));
        await page.click('#log-next');
        await page.waitForSelector('#deliveries-out[data-page="2"][aria-busy="false"]');
        const api = curl('GET', `/v1/webhooks/${hook.id}/deliveries?page=2&limit=10`, { key }).body;
        expect(pr, 'the older page', api.data.map((d) => d.id),
            await page.$$eval('#deliveries-table tbody tr', (trs) => trs.map((tr) => tr.dataset.deliveryId)));
        expect(pr, 'no older page', true, await page.$eval('#log-next', (b) => b.disabled));
        await page.click('#log-prev');
        await page.waitForSelector('#deliveries-out[data-page="1"][aria-busy="false"]');
        const links = await page.$$eval('#deliveries-table tbody tr a[href^="#job/"]', (as) => as.map((a) => a.getAttribute('href').slice(5)));
        const completed = curl('GET', `/v1/webhooks/${hook.id}/deliveries?limit=10`, { key }).body.data.filter((d) => d.job_id).map((d) => d.job_id);
        expect(pr, 'links to the jobs', completed, links);
        if (!completed.every((j) => jobs.includes(j)))
            pr.push(`jobs in the log that were not made here: ${completed}`);
        await visit(page, 'webhook-log-jobs');
    });

    await step('webhooks: a test past the hourly limit is refused, in words next to its button', async (pr) => {
        allowed = [[`/v1/webhooks/${hook.id}/test`, 429]];
        const res = await answer(page, 'POST', `/v1/webhooks/${hook.id}/test`, () => page.click('#log-test'));
        expect(pr, 'the API\'s status', 429, res.status());
        await page.waitForSelector('#log-test-error:not(:empty)');
        const t = await text(page, '#log-test-error');
        if (!/^This webhook was tested too often in the last hour\. Try again in \d+ (minutes?|seconds?)\.$/.test(t))
            pr.push(`the refusal: ${t}`);
        expect(pr, 'the button says where its error is', true,
            await page.$eval('#log-test', (b) => b.getAttribute('aria-describedby').split(' ').includes('log-test-error')));
        expect(pr, 'no delivery made', 11, curl('GET', `/v1/webhooks/${hook.id}/deliveries`, { key }).body.total);
        await visit(page, 'webhook-test-refused');
        allowed = [];
    });

    await step('webhooks: turned off and on again from the list (the API agrees)', async (pr) => {
        await go(page, '#webhooks', 'webhooks');
        const row = `#webhooks-table tr[data-webhook-id="${hook.id}"]`;
        let res = await answer(page, 'PATCH', `/v1/webhooks/${hook.id}`, () => page.click(`${row} button.toggle`));
        expect(pr, 'turned off', 200, res.status());
        await page.waitForSelector(`${row}[data-enabled="false"]`);
        expect(pr, 'the API says', false, curl('GET', `/v1/webhooks/${hook.id}`, { key }).body.enabled);
        expect(pr, 'the row says', 'Disabled', await text(page, `${row} td[data-label="Status"] .status-revoked`));
        expect(pr, 'the button', 'Turn on', await text(page, `${row} button.toggle`));
        res = await answer(page, 'PATCH', `/v1/webhooks/${hook.id}`, () => page.click(`${row} button.toggle`));
        expect(pr, 'turned on', 200, res.status());
        await page.waitForSelector(`${row}[data-enabled="true"]`);
        expect(pr, 'the API says then', true, curl('GET', `/v1/webhooks/${hook.id}`, { key }).body.enabled);
    });

    await step('webhooks: deleting asks first; then the API has it no more, and its log page says not found', async (pr) => {
        await go(page, '#webhooks', 'webhooks');
        await page.click(`#webhooks-table tr[data-webhook-id="${hook.id}"] button.delete`);
        await page.waitForSelector('#delete-dialog[open]');
        const words = await text(page, '#delete-dialog-text');
        if (!words.includes(receiver + hookPath))
            pr.push(`the question: ${words}`);
        await visit(page, 'webhook-delete-confirm');
        const res = await answer(page, 'DELETE', `/v1/webhooks/${hook.id}`, () => page.click('#delete-dialog-confirm'));
        expect(pr, 'the API\'s status', 200, res.status());
        await page.waitForSelector('#webhooks-empty');
        expect(pr, 'the focus on the list\'s title', 'webhooks-list-title', await page.evaluate(() => document.activeElement.id));
        const n = await text(page, '#webhooks-notice');
        if (!n.includes('is deleted'))
            pr.push(`the notice: ${n}`);
        expect(pr, 'GET /v1/webhooks/ID', 404, curl('GET', `/v1/webhooks/${hook.id}`, { key }).status);
        expect(pr, 'the API\'s list', 0, curl('GET', '/v1/webhooks', { key }).body.data.length);
        allowed = [[`/v1/webhooks/${hook.id}`, 404]];
        await go(page, `#webhook/${hook.id}`, 'webhook');
        expect(pr, 'the log page', 'Not found: there is no such webhook on this account.', await text(page, '#not-found'));
        await visit(page, 'webhook-not-found');
        allowed = [];
    });

    await step('a state change without the CSRF token is refused (403 csrf_token_invalid) and makes nothing', async (pr) => {
        allowed = [['/v1/webhooks', 403], ['/v1/suppressions', 403]];
        const r = await page.evaluate(async (url) => {
            const post = async (p, body) => {
                const res = await fetch(p, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
                return [res.status, (await res.json()).error.code];
            };
            return [await post('/v1/webhooks', { url }), await post('/v1/suppressions', { entries: ['csrf@example.com'] })];
        }, receiver + '/csrf');
        expect(pr, 'POST /v1/webhooks', [403, 'csrf_token_invalid'], r[0]);
        expect(pr, 'POST /v1/suppressions', [403, 'csrf_token_invalid'], r[1]);
        expect(pr, 'no webhook made', 0, curl('GET', '/v1/webhooks', { key }).body.data.length);
        expect(pr, 'no entry added', 0, curl('GET', '/v1/suppressions', { key }).body.total);
        allowed = [];
    });

    // ---- suppressions
    await step('suppressions: the page is in the menu and says the list is empty', async (pr) => {
        await page.click('nav a[href="#suppressions"]');
        await ready(page, 'suppressions');
        expect(pr, 'the title', 'Suppressions — svc dashboard', await page.title());
        expect(pr, 'empty', 'The list is empty.', await text(page, '#suppressions-empty'));
        await visit(page, 'suppressions-empty');
    });

    await step('suppressions: one address added with the keyboard (Enter); a bad one refused in words on its field', async (pr) => {
        allowed = [['/v1/suppressions', 400]];
        await page.focus('#suppression-entry');
        await page.keyboard.type('not an address');
        let res = await answer(page, 'POST', '/v1/suppressions', () => page.keyboard.press('Enter'));
        expect(pr, 'a bad entry', 400, res.status());
        await page.waitForSelector('#suppression-add-error:not(:empty)');
        expect(pr, 'in words', 'not an address is not an e-mail address or @domain.', await text(page, '#suppression-add-error'));
        expect(pr, 'the field marked', 'true', await page.$eval('#suppression-entry', (e) => e.getAttribute('aria-invalid')));
        await visit(page, 'suppressions-refused');
        await page.$eval('#suppression-entry', (e) => { e.value = ''; });
        await page.focus('#suppression-entry');
        await page.keyboard.type('Jane.Doe@Example.COM');
        res = await answer(page, 'POST', '/v1/suppressions', () => page.keyboard.press('Enter'));
        expect(pr, 'the API\'s status', 201, res.status());
        await page.waitForSelector('#suppressions-table tr[data-entry="jane.doe@example.com"]');
        expect(pr, 'the notice', 'Jane.Doe@Example.COM is on the list now.', await text(page, '#suppressions-notice'));
        const api = curl('GET', '/v1/suppressions', { key }).body;
        expect(pr, 'the API\'s list', ['jane.doe@example.com'], api.data.map((x) => x.entry));
        await zoneProblems(pr, page, '#suppressions-table tr[data-entry="jane.doe@example.com"] time', api.data[0].created_at);
        allowed = [];
    });

    const files = env('DASH_FILES');
    await step('suppressions: a file with a bad line is refused naming its line, nothing imported', async (pr) => {
        allowed = [['/v1/suppressions', 400]];
        const f = path.join(files, 'bad-suppressions.txt');
        fs.writeFileSync(f, '# addresses\nfirst@bad-file.example\n\nnot an address at all\nlast@bad-file.example\n');
        const input = await page.$('#suppression-file');
        await input.uploadFile(f);
        const res = await answer(page, 'POST', '/v1/suppressions', () => page.click('#suppression-import'));
        expect(pr, 'the API\'s status', 400, res.status());
        await page.waitForSelector('#suppression-import-error:not(:empty)');
        const t = await text(page, '#suppression-import-error');
        if (!t.startsWith('The file was not imported: Line 4 (“not an address at all”) is not an e-mail address or @domain'))
            pr.push(`the refusal: ${t}`);
        expect(pr, 'nothing imported', 1, curl('GET', '/v1/suppressions', { key }).body.total);
        await visit(page, 'suppressions-import-refused');
        allowed = [];
    });

    await step('suppressions: a file imported (a CSV with a header, comments, a repeat); the counts are the API\'s', async (pr) => {
        const f = path.join(files, 'suppressions.csv');
        const lines = ['email,reason', '# from the old system', ''];
        for (let i = 1; i <= 24; i++)
            lines.push(`user${String(i).padStart(2, '0')}@import.example,bounced`);
        lines.push('"@Spam-Domain.Example",domain', 'jane.doe@example.com,again');
        fs.writeFileSync(f, lines.join('\r\n') + '\r\n');
        const input = await page.$('#suppression-file');
        await input.uploadFile(f);
        const res = await answer(page, 'POST', '/v1/suppressions', () => page.click('#suppression-import'));
        expect(pr, 'the API\'s status', 201, res.status());
        const r = await res.json();
        expect(pr, 'the API\'s counts', { added: 25, existing: 1 }, r);
        await page.waitForSelector('#suppression-import-result:not(:empty)');
        expect(pr, 'the counts shown', ['25', '1'], await page.$eval('#suppression-import-result', (e) => [e.dataset.added, e.dataset.existing]));
        expect(pr, 'in words', 'suppressions.csv: 25 entries added, 1 entry was on the list already.', await text(page, '#suppression-import-result'));
        expect(pr, 'the API\'s total', 26, curl('GET', '/v1/suppressions', { key }).body.total);
        await page.waitForSelector('#suppressions-out[data-total="26"][aria-busy="false"]');
        expect(pr, 'the page', 'Page 1 of 2', await text(page, '#suppressions-page'));
        expect(pr, 'rows on the first page', 20, await page.$$eval('#suppressions-table tbody tr', (trs) => trs.length));
        await visit(page, 'suppressions-imported');
    });

    await step('suppressions: the second page is the API\'s second page', async (pr) => {
        await page.click('#suppressions-next');
        await page.waitForSelector('#suppressions-out[data-query="page=2&limit=20"][aria-busy="false"]');
        const api = curl('GET', '/v1/suppressions?page=2&limit=20', { key }).body.data.map((x) => x.entry);
        expect(pr, 'entries', api, await page.$$eval('#suppressions-table tbody tr', (trs) => trs.map((tr) => tr.dataset.entry)));
        expect(pr, 'the page', 'Page 2 of 2', await text(page, '#suppressions-page'));
        expect(pr, 'no next page', true, await page.$eval('#suppressions-next', (b) => b.disabled));
        await visit(page, 'suppressions-page-2');
    });

    await step('suppressions: search finds what the API finds (any case), and says when nothing holds the text', async (pr) => {
        await page.type('#suppression-search', 'SPAM-domain');
        await page.keyboard.press('Enter');
        await page.waitForSelector('#suppressions-out[data-query="page=1&limit=20&q=SPAM-domain"][aria-busy="false"]');
        const api = curl('GET', '/v1/suppressions?q=SPAM-domain', { key }).body;
        expect(pr, 'the API finds', ['@spam-domain.example'], api.data.map((x) => x.entry));
        expect(pr, 'the page shows', ['@spam-domain.example'], await page.$$eval('#suppressions-table tbody tr', (trs) => trs.map((tr) => tr.dataset.entry)));
        expect(pr, 'its total', '1', await page.$eval('#suppressions-out', (e) => e.dataset.total));
        await page.$eval('#suppression-search', (e) => { e.value = ''; });
        await page.type('#suppression-search', 'user1');
        await page.click('#suppression-search-go');
        await page.waitForSelector('#suppressions-out[data-query="page=1&limit=20&q=user1"][aria-busy="false"]');
        const shown = await page.$$eval('#suppressions-table tbody tr', (trs) => trs.map((tr) => tr.dataset.entry).sort());
        expect(pr, 'user1…', Array.from({ length: 10 }, (_, i) => `user1${i}@import.example`), shown);
        await visit(page, 'suppressions-search');
        await page.$eval('#suppression-search', (e) => { e.value = ''; });
        await page.type('#suppression-search', 'nobody-has-this');
        await page.click('#suppression-search-go');
        await page.waitForSelector('#suppressions-out[data-total="0"][aria-busy="false"]');
        expect(pr, 'nothing found', 'No entry holds “nobody-has-this”.', await text(page, '#suppressions-empty'));
    });

    await step('suppressions: an entry removed after a confirmation, with the keyboard; the API has it no more', async (pr) => {
        await page.$eval('#suppression-search', (e) => { e.value = ''; });
        await page.type('#suppression-search', 'jane');
        await page.keyboard.press('Enter');
        await page.waitForSelector('#suppressions-out[data-query="page=1&limit=20&q=jane"][aria-busy="false"]');
        await page.focus('#suppressions-table tr[data-entry="jane.doe@example.com"] button.delete');
        await page.keyboard.press('Enter');
        await page.waitForSelector('#suppression-delete-dialog[open]');
        expect(pr, 'the focus on Cancel', 'suppression-delete-dialog-cancel', await page.evaluate(() => document.activeElement.id));
        await visit(page, 'suppression-delete-confirm');
        await page.keyboard.press('Tab');
        expect(pr, 'Tab goes to', 'suppression-delete-dialog-confirm', await page.evaluate(() => document.activeElement.id));
        const res = await answer(page, 'DELETE', '/v1/suppressions/jane.doe%40example.com', () => page.keyboard.press('Enter'));
        expect(pr, 'the API\'s status', 200, res.status());
        await page.waitForSelector('#suppressions-out[data-total="0"][aria-busy="false"]');
        expect(pr, 'the notice', 'jane.doe@example.com is no longer on the list.', await text(page, '#suppressions-notice'));
        expect(pr, 'the focus on the list\'s title', 'suppressions-list-title', await page.evaluate(() => document.activeElement.id));
        expect(pr, 'the API finds it no more', 0, curl('GET', '/v1/suppressions?q=jane', { key }).body.total);
        expect(pr, 'DELETE again', 404, curl('DELETE', '/v1/suppressions/jane.doe%40example.com', { key }).status);
        expect(pr, 'the rest stays', 25, curl('GET', '/v1/suppressions', { key }).body.total);
        await page.$eval('#suppression-search', (e) => { e.value = ''; });
        await page.click('#suppression-search-go');
        await page.waitForSelector('#suppressions-out[data-total="25"][aria-busy="false"]');
        await visit(page, 'suppressions');
    });

    report('no console errors on any page (only the API refusals the steps provoked)', consoleProblems);
    report('axe-core: no serious or critical violation on any page; every control has a label', axeProblems);
    report('every page fits a phone-sized screen (390 px) without sideways scrolling', phoneProblems);
}

launch(() => allowed, run).then(() => {
    process.exitCode = results.every(Boolean) && !state.failedBefore ? 0 : 1;
}, (e) => {
    console.log(`not ok - the browser ran the steps\n#   ${e && e.stack ? e.stack : e}`);
    process.exitCode = 1;
});
