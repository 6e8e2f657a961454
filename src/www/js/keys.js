// keys.js: the account's API keys: the list (GET /v1/keys), a new key
// (POST /v1/keys: scopes, rate limit, sandbox, IP allowlist) whose secret
// is shown once with a copy button and kept nowhere, and revocation
// (DELETE /v1/keys/{id}) after a confirmation.
import { api } from './api.js';
import { h, clear, when, markRefused } from './dom.js';
import { scopeWords } from './words.js';
import { secretCard } from './widgets.js';

const SCOPES = Object.keys(scopeWords);

function keyRow(k, onRevoke) {
    const limits = [
        k.rateLimit === null ? 'tier\'s rate limit' : `${k.rateLimit} requests a minute`,
        k.sandbox ? 'sandbox' : 'live',
        k.ip_allowlist.length ? `only from ${k.ip_allowlist.join(', ')}` : 'from any address',
    ];
    // (data-label: a phone's screen shows each row as a card, the
    // column's name before each value)
    return h('tr', { 'data-key-id': k.id, 'data-status': k.status },
        h('td', { 'data-label': 'Name' }, k.name || h('span', { class: 'hint' }, '(no name)')),
        h('td', { 'data-label': 'Key' }, h('code', {}, k.hint)),
        h('td', { 'data-label': 'Scopes' }, k.scopes.join(', ')),
        h('td', { 'data-label': 'Limits' }, limits.join('; '), k.expires_at ? ['; expires ', when(k.expires_at)] : null),
        h('td', { 'data-label': 'Created' }, when(k.created_at)),
        h('td', { 'data-label': 'Status' }, h('span', { class: 'status-' + k.status }, k.status === 'active' ? 'Active' : 'Revoked'),
            k.revoked_at ? [' ', when(k.revoked_at)] : null),
        h('td', { 'data-label': 'Action' }, k.status === 'active'
            ? h('button', { type: 'button', class: 'danger revoke', 'aria-label': `Revoke key ${k.name || k.hint}`,
                onclick: () => onRevoke(k) }, 'Revoke')
            : null));
}

export async function render(main, { stale }) {
    const listBox = h('div', { id: 'keys-list' });
    const notice = h('p', { class: 'notice', role: 'status', id: 'keys-notice' });
    const secretBox = h('div', { id: 'new-key' });

    // ---- the confirmation before a revocation
    const dlgText = h('p', { id: 'revoke-text' });
    const dlgErr = h('p', { class: 'error', role: 'alert', id: 'revoke-error' });
    const dlgCancel = h('button', { type: 'button', class: 'secondary', id: 'revoke-cancel', autofocus: true }, 'Cancel');
    const dlgOk = h('button', { type: 'button', class: 'danger', id: 'revoke-confirm' }, 'Revoke key');
    const dlg = h('dialog', { id: 'revoke-dialog', 'aria-labelledby': 'revoke-title', 'aria-describedby': 'revoke-text' },
        h('h2', { id: 'revoke-title' }, 'Revoke this key?'), dlgText, dlgErr,
        h('div', { class: 'actions' }, dlgCancel, dlgOk));
    let target = null;
    dlgCancel.addEventListener('click', () => dlg.close());
    dlgOk.addEventListener('click', async () => {
        dlgOk.disabled = true;
        dlgErr.textContent = '';
        try {
            await api('DELETE', `/v1/keys/${encodeURIComponent(target.id)}`);
            dlg.close();
            notice.textContent = `The key ${target.name || target.hint} is revoked: the API refuses it from now on.`;
            await refresh();
        } catch (e) {
            dlgErr.textContent = e.code === 'revocation_in_progress'
                ? 'Another revocation is still settling. Try again in a moment.'
                : `The key could not be revoked: ${e.message}`;
        } finally {
            dlgOk.disabled = false;
        }
    });
    function askRevoke(k) {
        target = k;
        notice.textContent = '';
        dlgErr.textContent = '';
        dlgText.textContent = `Revoke the key “${k.name || '(no name)'}” (${k.hint})? ` +
            'Programs that use it are refused from then on. This cannot be undone.';
        dlg.showModal();
    }

    async function refresh() {
        const { data } = await api('GET', '/v1/keys');
        if (stale())
            return;
        if (!data.length) {
            clear(listBox, h('p', {}, 'This account has no keys yet.'));
            return;
        }
        clear(listBox, h('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-labelledby': 'keys-list-title' },
            h('table', { class: 'cards-narrow' },
                h('caption', { class: 'hint' }, `${data.length} keys, revoked ones included`),
                h('thead', {}, h('tr', {}, ['Name', 'Key', 'Scopes', 'Limits', 'Created', 'Status', 'Action']
                    .map((t) => h('th', { scope: 'col' }, t)))),
                h('tbody', {}, data.map((k) => keyRow(k, askRevoke))))));
    }

    // ---- a new key
    const err = h('p', { class: 'error', role: 'alert', id: 'create-error' });
    const name = h('input', { type: 'text', id: 'key-name', name: 'name', maxlength: 100, autocomplete: 'off' });
    const scopeBoxes = SCOPES.map((s) => h('input', { type: 'checkbox', name: 'scopes', value: s, id: 'scope-' + s.replace(/[^a-z]/g, '_') }));
    const rate = h('input', { type: 'number', id: 'key-rate', name: 'rateLimit', min: 1, max: 100000, inputmode: 'numeric',
        'aria-describedby': 'key-rate-hint' });
    const sandbox = h('input', { type: 'checkbox', id: 'key-sandbox', name: 'sandbox' });
    const allow = h('textarea', { id: 'key-allow', name: 'ip_allowlist', 'aria-describedby': 'key-allow-hint', rows: 3 });
    const submit = h('button', { type: 'submit', id: 'key-create' }, 'Create key');
    const fields = { name, rateLimit: rate, rate_limit: rate, sandbox, ip_allowlist: allow, scopes: scopeBoxes[0] };
    const form = h('form', { id: 'key-form', novalidate: true, 'aria-labelledby': 'key-form-title' },
        h('div', { class: 'field' }, h('label', { for: 'key-name' }, 'Name'), name,
            h('p', { class: 'hint' }, 'For you to tell your keys apart, such as the program that uses it.')),
        h('fieldset', {}, h('legend', {}, 'What the key may do'),
            scopeBoxes.map((b) => h('label', { for: b.id }, b, h('span', {}, scopeWords[b.value], ' ', h('code', {}, b.value))))),
        h('div', { class: 'field' }, h('label', { for: 'key-rate' }, 'Rate limit (requests a minute)'), rate,
            h('p', { class: 'hint', id: 'key-rate-hint' }, 'Leave empty for the usual limit of your account.')),
        h('div', { class: 'field' }, h('label', { for: 'key-sandbox', class: 'check' }, sandbox,
            'Sandbox key: answers test addresses only, and costs no credits')),
        h('div', { class: 'field' }, h('label', { for: 'key-allow' }, 'IP allowlist'), allow,
            h('p', { class: 'hint', id: 'key-allow-hint' },
                'Addresses or networks (CIDR) the key may be used from, one a line. Empty: from anywhere.')),
        err, submit);
    form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        err.textContent = '';
        notice.textContent = '';
        for (const el of form.querySelectorAll('[aria-invalid]'))
            el.removeAttribute('aria-invalid');
        const scopes = scopeBoxes.filter((b) => b.checked).map((b) => b.value);
        if (!scopes.length) {
            err.textContent = 'Choose at least one thing the key may do.';
            scopeBoxes[0].focus();
            return;
        }
        const body = { scopes, sandbox: sandbox.checked };
        if (name.value.trim())
            body.name = name.value.trim();
        if (rate.value.trim()) {
            const n = Number(rate.value);
            if (!Number.isInteger(n) || n < 1 || n > 100000) {
                err.textContent = 'The rate limit is a whole number from 1 to 100000, or empty.';
                rate.setAttribute('aria-invalid', 'true');
                rate.focus();
                return;
            }
            body.rateLimit = n;
        }
        const ips = allow.value.split(/[\s,]+/).filter(Boolean);
        if (ips.length)
            body.ip_allowlist = ips;
        submit.disabled = true;
        try {
            const k = await api('POST', '/v1/keys', body);
            form.reset();
            showSecret(k);
            await refresh();
        } catch (e) {
            err.textContent = `The key was not created: ${e.message}`;
            markRefused(fields, e);
        } finally {
            submit.disabled = false;
        }
    });

    function showSecret(k) {
        secretCard(secretBox, { id: 'new-key-secret', title: `New key ${k.name || ''}`.trim(),
            warning: 'Copy the key now and keep it safe: it is shown only this once, ' +
                'and neither this page nor the service can show it again.',
            label: 'Key', value: k.key, after: () => submit.focus() });
    }

    await refresh();
    if (stale())
        return;
    clear(main,
        h('h1', {}, 'API keys'),
        notice,
        secretBox,
        h('h2', { id: 'keys-list-title' }, 'Your keys'),
        listBox,
        h('section', { class: 'card', 'aria-labelledby': 'key-form-title' },
            h('h2', { id: 'key-form-title' }, 'Create a key'), form),
        dlg);
}
