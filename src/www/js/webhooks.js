// webhooks.js: the account's webhooks (#webhooks: the list of GET
// /v1/webhooks, a new one by POST /v1/webhooks whose signing secret is
// shown once, a test event, turned off or on (PATCH enabled), a new secret
// by rotate-secret and deletion, each after a confirmation) and the delivery log of one (#webhook/ID: GET
// /v1/webhooks/ID/deliveries, page by page, refreshed while a delivery is
// on its way). Errors of the API are said next to the control that caused
// them; times are in the user's zone.
import { api } from './api.js';
import { h, clear, when, plural, waitWords, notFound, markRefused } from './dom.js';
import { eventWords, deliveryStatusWords, describe } from './words.js';
import { secretCard, confirmDialog } from './widgets.js';

const EVENTS = Object.keys(eventWords);
const LOG_PAGE = 10;
const POLL_MS = 2000;
const enc = encodeURIComponent;
const eventId = (e) => 'event-' + e.replace(/[^a-z]/g, '_');

// testWords(ERROR): why a test event was refused, in words
function testWords(e) {
    if (e.code === 'webhook_test_in_flight')
        return 'A test of this webhook is still being sent. Try again once it is over.';
    if (e.status === 429 && e.retryAfter !== null)
        return `This webhook was tested too often in the last hour. Try again in ${waitWords(e.retryAfter)}.`;
    return `The test event was not sent: ${e.message}`;
}

// sendTest(HOOK, ERR, STATUS, BUTTON): POST /v1/webhooks/ID/test, its
// outcome said in ERR or STATUS (next to BUTTON); the API's answer or null
async function sendTest(w, err, status, button) {
    err.textContent = '';
    status.textContent = '';
    button.disabled = true;
    try {
        const r = await api('POST', `/v1/webhooks/${enc(w.id)}/test`);
        status.textContent = 'A test event (webhook.test) is on its way.';
        status.dataset.deliveryId = r.delivery_id;
        return r;
    } catch (e) {
        err.textContent = testWords(e);
        err.dataset.code = e.code;
        return null;
    } finally {
        button.disabled = false;
    }
}

function eventList(events) {
    return h('ul', { class: 'plain' }, events.map((e) => h('li', {}, h('code', {}, e))));
}

function hookStatus(w) {
    if (w.enabled)
        return h('span', { class: 'status-active' }, 'Enabled');
    return h('span', { class: 'status-revoked' }, 'Disabled', w.disabled_reason ? `: ${w.disabled_reason}` : '');
}

// ---- the list, a new webhook, test, rotate, delete
export async function render(main, { stale }) {
    const notice = h('p', { class: 'notice', role: 'status', id: 'webhooks-notice' });
    const secretBox = h('div', { id: 'webhook-secret-box' });
    const listBox = h('div', { id: 'webhooks-list' });
    const listTitle = h('h2', { id: 'webhooks-list-title', tabindex: '-1' }, 'Your webhooks');
    const rotate = confirmDialog('rotate-dialog', 'Make a new secret');
    const remove = confirmDialog('delete-dialog', 'Delete webhook');
    let hooks = [];

    const name = (w) => w.description || w.url;
    const signingHelp = h('p', { class: 'hint' }, 'Each delivery carries the header X-Service-Signature: t=TIME,v1=SIGNATURE, ',
        'the SIGNATURE being the HMAC-SHA256 of “TIME.BODY” with this secret, in hexadecimal.');

    function askRotate(w) {
        notice.textContent = '';
        rotate.ask('Make a new signing secret?',
            `Make a new signing secret for ${w.url}? The current secret keeps signing beside the new one for 24 hours, ` +
            'so that your receiver can switch to the new one; then only the new one signs.',
            async () => {
                let r;
                try {
                    r = await api('POST', `/v1/webhooks/${enc(w.id)}/rotate-secret`);
                } catch (e) {
                    throw new Error(`The secret was not changed: ${e.message}`);
                }
                const shown = secretCard(secretBox, {
                    id: 'webhook-secret', title: `New signing secret of ${name(w)}`, label: 'Signing secret', value: r.secret,
                    warning: 'Copy the secret now and keep it safe: it is shown only this once, ' +
                        'and neither this page nor the service can show it again.',
                    more: [h('p', { id: 'webhook-secret-until' }, 'The previous secret keeps signing beside it until ',
                        when(r.previous_secret_expires_at), '.'), signingHelp],
                    after: () => listTitle.focus(),
                });
                await refresh();
                return shown;
            });
    }

    function askDelete(w) {
        notice.textContent = '';
        remove.ask('Delete this webhook?',
            `Delete the webhook to ${w.url}? No more events are sent to it, and its delivery log is deleted with it. ` +
            'This cannot be undone.',
            async () => {
                try {
                    await api('DELETE', `/v1/webhooks/${enc(w.id)}`);
                } catch (e) {
                    throw new Error(`The webhook was not deleted: ${e.message}`);
                }
                notice.textContent = `The webhook to ${w.url} is deleted.`;
                await refresh();
                return listTitle;
            });
    }

    function hookRow(w) {
        const err = h('p', { class: 'error', role: 'alert', id: `test-error-${w.id}` });
        const status = h('p', { class: 'hint', role: 'status', id: `test-status-${w.id}` });
        const test = h('button', { type: 'button', class: 'secondary test', 'aria-label': `Send test event to ${w.url}`,
            'aria-describedby': `test-error-${w.id} test-status-${w.id}` }, 'Send test');
        test.addEventListener('click', async () => {
            if (await sendTest(w, err, status, test))
                clear(status, 'A test event (webhook.test) is on its way: see ',
                    h('a', { href: `#webhook/${w.id}` }, 'its delivery log'), '.');
        });
        const toggle = h('button', { type: 'button', class: 'secondary toggle',
            'aria-label': `${w.enabled ? 'Turn off' : 'Turn on'} the webhook to ${w.url}`,
            'aria-describedby': `test-error-${w.id}` }, w.enabled ? 'Turn off' : 'Turn on');
        toggle.addEventListener('click', async () => {
            err.textContent = '';
            status.textContent = '';
            notice.textContent = '';
            toggle.disabled = true;
            try {
                await api('PATCH', `/v1/webhooks/${enc(w.id)}`, { enabled: !w.enabled });
                notice.textContent = w.enabled ? `The webhook to ${w.url} is off: no events are sent to it until it is turned on.`
                    : `The webhook to ${w.url} is on again: events are sent to it from now on.`;
                await refresh();
            } catch (e) {
                err.textContent = `The webhook was not turned ${w.enabled ? 'off' : 'on'}: ${e.message}`;
                toggle.disabled = false;
            }
        });
        return h('tr', { 'data-webhook-id': w.id, 'data-enabled': String(w.enabled) },
            h('td', { 'data-label': 'URL' }, h('code', {}, w.url), w.description ? h('p', { class: 'hint' }, w.description) : null),
            h('td', { 'data-label': 'Events' }, eventList(w.events)),
            h('td', { 'data-label': 'Status' }, hookStatus(w),
                w.previous_secret_expires_at ? h('p', { class: 'hint' }, 'Previous secret signs until ', when(w.previous_secret_expires_at)) : null),
            h('td', { 'data-label': 'Created' }, when(w.created_at)),
            h('td', { 'data-label': 'Actions' },
                h('div', { class: 'row-actions' },
                    h('a', { href: `#webhook/${w.id}`, class: 'log', 'aria-label': `Delivery log of ${w.url}` }, 'Delivery log'),
                    test, toggle,
                    h('button', { type: 'button', class: 'secondary rotate', 'aria-label': `Rotate secret of ${w.url}`,
                        onclick: () => askRotate(w) }, 'Rotate secret'),
                    h('button', { type: 'button', class: 'danger delete', 'aria-label': `Delete the webhook to ${w.url}`,
                        onclick: () => askDelete(w) }, 'Delete')),
                err, status));
    }

    async function refresh() {
        const { data } = await api('GET', '/v1/webhooks');
        if (stale())
            return;
        hooks = data;
        listBox.dataset.count = String(hooks.length);
        if (!hooks.length) {
            clear(listBox, h('p', { id: 'webhooks-empty' }, 'This account has no webhooks yet.'));
            return;
        }
        clear(listBox, h('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-labelledby': 'webhooks-list-title' },
            h('table', { class: 'cards-narrow', id: 'webhooks-table' },
                h('caption', { class: 'hint' }, plural(hooks.length, 'webhook', 'webhooks')),
                h('thead', {}, h('tr', {}, ['URL', 'Events', 'Status', 'Created', 'Actions']
                    .map((t) => h('th', { scope: 'col' }, t)))),
                h('tbody', {}, hooks.map(hookRow)))));
    }

    // ---- a new webhook
    const err = h('p', { class: 'error', role: 'alert', id: 'webhook-create-error' });
    const url = h('input', { type: 'url', id: 'webhook-url', name: 'url', required: true, autocomplete: 'off',
        spellcheck: 'false', 'aria-describedby': 'webhook-url-hint', placeholder: 'https://' });
    const boxes = EVENTS.map((e) => h('input', { type: 'checkbox', name: 'events', value: e, id: eventId(e), checked: true }));
    const desc = h('input', { type: 'text', id: 'webhook-description', name: 'description', maxlength: 500, autocomplete: 'off' });
    const submit = h('button', { type: 'submit', id: 'webhook-create' }, 'Create webhook');
    const fields = { url, events: boxes[0], description: desc };
    const form = h('form', { id: 'webhook-form', novalidate: true, 'aria-labelledby': 'webhook-form-title' },
        h('div', { class: 'field' }, h('label', { for: 'webhook-url' }, 'URL'), url,
            h('p', { class: 'hint', id: 'webhook-url-hint' }, 'An https:// address of yours that takes POST requests.')),
        h('fieldset', {}, h('legend', {}, 'Events to send'),
            boxes.map((b) => h('label', { for: b.id }, b, h('span', {}, eventWords[b.value], ' ', h('code', {}, b.value))))),
        h('div', { class: 'field' }, h('label', { for: 'webhook-description' }, 'Description (optional)'), desc),
        err, submit);
    form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        err.textContent = '';
        notice.textContent = '';
        for (const el of form.querySelectorAll('[aria-invalid]'))
            el.removeAttribute('aria-invalid');
        const events = boxes.filter((b) => b.checked).map((b) => b.value);
        if (!url.value.trim()) {
            err.textContent = 'Give the URL the events are to be sent to.';
            url.setAttribute('aria-invalid', 'true');
            url.focus();
            return;
        }
        if (!events.length) {
            err.textContent = 'Choose at least one event to send.';
            boxes[0].focus();
            return;
        }
        const body = { url: url.value.trim(), events };
        if (desc.value.trim())
            body.description = desc.value.trim();
        submit.disabled = true;
        try {
            const w = await api('POST', '/v1/webhooks', body);
            form.reset();
            secretCard(secretBox, {
                id: 'webhook-secret', title: `Signing secret of the webhook to ${w.url}`, label: 'Signing secret', value: w.secret,
                warning: 'Copy the secret now and keep it safe: your receiver needs it to check that deliveries come from us. ' +
                    'It is shown only this once, and neither this page nor the service can show it again.',
                more: signingHelp, after: () => submit.focus(),
            });
            await refresh();
        } catch (e) {
            err.textContent = e.code === 'webhook_limit_reached'
                ? `The webhook was not created: ${e.message}. Delete one first.`
                : `The webhook was not created: ${e.message}`;
            markRefused(fields, e);
        } finally {
            submit.disabled = false;
        }
    });

    await refresh();
    if (stale())
        return;
    clear(main,
        h('h1', {}, 'Webhooks'),
        h('p', {}, 'Webhooks send the events of your jobs to a URL of yours as they happen.'),
        notice,
        secretBox,
        listTitle,
        listBox,
        h('section', { class: 'card', 'aria-labelledby': 'webhook-form-title' },
            h('h2', { id: 'webhook-form-title' }, 'Create a webhook'), form),
        rotate.dlg, remove.dlg);
}

// ---- the delivery log of one webhook
function answerWords(d) {
    if (d.last_status_code !== null)
        return `HTTP ${d.last_status_code}`;
    return d.last_error || '—';
}

function attemptItem(a) {
    const what = a.status_code !== null ? `answered HTTP ${a.status_code}` : `failed: ${a.error || 'no answer'}`;
    return h('li', {}, `Attempt ${a.attempt}, `, when(a.started_at), `: ${what}`,
        a.duration_ms !== null ? ` in ${a.duration_ms} ms` : '', '.');
}

function deliveryRow(d) {
    return h('tr', { 'data-delivery-id': d.id, 'data-event-id': d.event_id, 'data-status': d.status, 'data-attempts': String(d.attempts) },
        h('td', { 'data-label': 'Event' }, h('code', {}, d.event), d.job_id ? h('p', { class: 'hint' }, 'Job ', h('a', { href: `#job/${d.job_id}` }, d.job_id)) : null),
        h('td', { 'data-label': 'Status' }, h('span', { class: `delivery-${d.status}` }, describe(deliveryStatusWords, d.status))),
        h('td', { 'data-label': 'Attempts' }, String(d.attempts),
            d.attempt_log.length ? h('details', {}, h('summary', {}, 'Each attempt'),
                h('ol', { class: 'plain' }, d.attempt_log.map(attemptItem))) : null),
        h('td', { 'data-label': 'Last answer' }, answerWords(d)),
        h('td', { 'data-label': 'Created' }, when(d.created_at)),
        h('td', { 'data-label': 'Finished' }, d.finished_at ? when(d.finished_at)
            : d.next_retry_at ? ['next attempt ', when(d.next_retry_at)] : '—'));
}

export async function renderLog(main, { param, stale }) {
    let w;
    try {
        w = await api('GET', `/v1/webhooks/${enc(param)}`);
    } catch (e) {
        if (e.status === 404) {
            notFound(main, 'Delivery log', 'webhook');
            return;
        }
        throw e;
    }
    if (stale())
        return;
    const out = h('div', { id: 'deliveries-out' });
    const err = h('p', { class: 'error', role: 'alert', id: 'deliveries-error' });
    const testErr = h('p', { class: 'error', role: 'alert', id: 'log-test-error' });
    const testStatus = h('p', { class: 'hint', role: 'status', id: 'log-test-status' });
    const test = h('button', { type: 'button', id: 'log-test', 'aria-describedby': 'log-test-error log-test-status' }, 'Send a test event');
    const refreshBtn = h('button', { type: 'button', class: 'secondary', id: 'log-refresh' }, 'Refresh');
    const prev = h('button', { type: 'button', class: 'secondary', id: 'log-prev' }, 'Newer deliveries');
    const next = h('button', { type: 'button', class: 'secondary', id: 'log-next' }, 'Older deliveries');
    const where = h('p', { id: 'log-page', 'aria-live': 'polite' });
    let page = 1;
    let n = 0;
    let timer = null;

    async function load() {
        const mine = ++n;
        clearTimeout(timer);
        out.setAttribute('aria-busy', 'true');
        let r;
        try {
            r = await api('GET', `/v1/webhooks/${enc(w.id)}/deliveries?page=${page}&limit=${LOG_PAGE}`);
        } catch (e) {
            if (mine === n && !stale()) {
                out.setAttribute('aria-busy', 'false');
                // (the account's requests of the minute used up: read
                // again when the window allows)
                if (e.status === 429 && e.retryAfter !== null) {
                    err.textContent = `Too many requests this minute: the log is read again in ${waitWords(e.retryAfter)}.`;
                    timer = setTimeout(() => { if (!stale() && mine === n) load(); }, e.retryAfter * 1000);
                } else {
                    err.textContent = `The delivery log could not be read: ${e.message}`;
                }
            }
            return;
        }
        if (mine !== n || stale())
            return;
        err.textContent = '';
        const pages = Math.max(1, Math.ceil(r.total / LOG_PAGE));
        out.dataset.total = String(r.total);
        out.dataset.page = String(page);
        prev.disabled = page <= 1;
        next.disabled = page >= pages;
        where.textContent = r.total ? `Page ${page} of ${pages}` : '';
        if (!r.data.length)
            clear(out, h('p', { id: 'deliveries-empty' }, 'Nothing was sent to this webhook yet.'));
        else
            clear(out, h('div', { class: 'scroll' }, h('table', { class: 'cards-narrow', id: 'deliveries-table' },
                h('caption', {}, `${plural(r.total, 'delivery', 'deliveries')}, the newest first`),
                h('thead', {}, h('tr', {}, ['Event', 'Status', 'Attempts', 'Last answer', 'Created', 'Finished']
                    .map((t) => h('th', { scope: 'col' }, t)))),
                h('tbody', {}, r.data.map(deliveryRow)))));
        out.setAttribute('aria-busy', 'false');
        // (while one is on its way, the log follows it)
        if (r.data.some((d) => d.status === 'sending' || (d.status === 'pending' && d.attempts === 0)))
            timer = setTimeout(() => { if (!stale() && mine === n) load(); }, POLL_MS);
    }
    test.addEventListener('click', async () => {
        if (await sendTest(w, testErr, testStatus, test)) {
            page = 1;
            await load();
        }
    });
    refreshBtn.addEventListener('click', () => load());
    prev.addEventListener('click', () => { page -= 1; load(); });
    next.addEventListener('click', () => { page += 1; load(); });
    clear(main,
        h('h1', {}, 'Delivery log'),
        h('p', {}, h('a', { href: '#webhooks' }, 'All webhooks')),
        h('dl', { class: 'result' },
            h('dt', {}, 'URL'), h('dd', {}, h('code', { id: 'log-url' }, w.url)),
            h('dt', {}, 'Events'), h('dd', {}, eventList(w.events)),
            h('dt', {}, 'Status'), h('dd', {}, hookStatus(w))),
        h('div', { class: 'actions' }, test, refreshBtn),
        testErr, testStatus,
        h('h2', { id: 'log-title' }, 'Deliveries'),
        err, out,
        h('div', { class: 'actions' }, prev, where, next));
    await load();
}
