// verify.js: verify one address (POST /v1/verify) and show the whole
// result: the verdict and its reason and sub-status in words, the domain,
// its mail servers and provider, the mail server's answer, the cost. Each
// value carries the API's own in data-value (the browser test compares).
import { api } from './api.js';
import { h, clear, when } from './dom.js';
import { statusWords, reasonWords, subStatusWords, catchAllWords, scoreBasisWords, describe } from './words.js';

const yesNo = (v) => (v === 'yes' ? 'Yes' : v === 'no' ? 'No' : String(v));

function row(field, label, value, ...shown) {
    return [h('dt', {}, label),
        h('dd', { 'data-field': field, 'data-value': value === null ? 'null' : String(value) },
            ...(shown.length ? shown : [value === null ? '—' : String(value)]))];
}

function resultView(r, onTry) {
    const smtp = r.smtp;
    return h('section', { class: 'card', id: 'verify-result', 'aria-labelledby': 'verify-result-title' },
        h('h2', { id: 'verify-result-title' }, `Result for ${r.email}`),
        h('p', { class: `verdict verdict-${r.status}`, id: 'verdict' }, describe(statusWords, r.status)),
        r.did_you_mean ? h('p', { class: 'notice', id: 'did-you-mean' }, `Did you mean ${r.did_you_mean}? `,
            h('button', { type: 'button', class: 'secondary', onclick: () => onTry(r.did_you_mean) },
                `Verify ${r.did_you_mean}`)) : null,
        h('dl', { class: 'result' },
            row('email', 'Address', r.email),
            row('status', 'Status', r.status, r.status),
            row('reason', 'Reason', r.reason, describe(reasonWords, r.reason)),
            row('sub_status', 'Sub-status', r.sub_status,
                r.sub_status === null ? 'None.' : [h('code', {}, r.sub_status), ': ', describe(subStatusWords, r.sub_status)]),
            row('score', 'Score', r.score, `${r.score} of 100 (how likely a message reaches a mailbox)`),
            row('score_basis', 'Score from', r.score_basis, describe(scoreBasisWords, r.score_basis)),
            row('did_you_mean', 'Did you mean', r.did_you_mean, r.did_you_mean === null ? 'No suggestion.' : r.did_you_mean),
            row('role', 'Role address', r.role, yesNo(r.role)),
            row('spam_trap', 'Spam trap', r.spam_trap, yesNo(r.spam_trap)),
            row('catch_all_verdict', 'Catch-all advice', r.catch_all_verdict,
                r.catch_all_verdict === null ? 'Not a catch-all domain.' : describe(catchAllWords, r.catch_all_verdict)),
            row('domain.name', 'Domain', r.domain.name),
            row('domain.acceptAll', 'Accepts any address', r.domain.acceptAll, yesNo(r.domain.acceptAll)),
            row('domain.disposable', 'Throw-away domain', r.domain.disposable, yesNo(r.domain.disposable)),
            row('domain.free', 'Free mail provider', r.domain.free, yesNo(r.domain.free)),
            row('mx', 'Mail servers', r.mx.map((m) => `${m.priority} ${m.host}`).join(', '),
                r.mx.length ? h('ul', {}, r.mx.map((m) => h('li', {}, `${m.host} (priority ${m.priority})`))) : 'None.'),
            row('provider', 'Provider', r.provider, r.provider === null ? 'None (no mail server).' : String(r.provider)),
            row('smtp.code', 'Mail server\'s answer', smtp ? smtp.code : null,
                smtp ? [smtp.code === null ? 'No reply code' : String(smtp.code),
                    smtp.enhanced_code ? ` (${smtp.enhanced_code})` : '',
                    smtp.message ? `: ${smtp.message}` : ''] : 'No mail server was asked.'),
            row('smtp.tls', 'Encrypted (STARTTLS)', smtp ? smtp.tls : null, smtp ? (smtp.tls ? 'Yes' : 'No') : '—'),
            row('verified_at', 'Verified', r.verified_at, when(r.verified_at)),
            row('cached', 'From the cache', r.cached, r.cached ? 'Yes: an earlier verification was reused.' : 'No: verified just now.'),
            row('credits_charged', 'Credits charged', r.credits_charged),
            row('credits_remaining', 'Credits left', r.credits_remaining)),
        h('details', {}, h('summary', {}, 'The API\'s answer as JSON'),
            h('pre', { id: 'verify-json' }, JSON.stringify(r, null, 2))));
}

export async function render(main) {
    const out = h('div', { id: 'verify-out', 'aria-live': 'polite' });
    const err = h('p', { class: 'error', role: 'alert', id: 'verify-error' });
    const email = h('input', { type: 'email', id: 'verify-email', name: 'email', required: true,
        autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'verify-hint verify-error' });
    const button = h('button', { type: 'submit', id: 'verify-submit' }, 'Verify');
    async function run(addr) {
        err.textContent = '';
        email.removeAttribute('aria-invalid');
        if (!addr) {
            err.textContent = 'Enter an e-mail address to verify.';
            email.setAttribute('aria-invalid', 'true');
            email.focus();
            return;
        }
        email.value = addr;
        button.disabled = true;
        main.setAttribute('aria-busy', 'true');
        clear(out, h('p', { class: 'loading' }, `Verifying ${addr}… this may take up to half a minute.`));
        try {
            const r = await api('POST', '/v1/verify', { email: addr });
            clear(out, resultView(r, run));
        } catch (e) {
            clear(out);
            err.textContent = e.code === 'insufficient_credits'
                ? 'There are not enough credits left on the account for a verification.'
                : e.code === 'rate_limited'
                    ? `Too many requests just now${e.retryAfter ? `: try again in ${e.retryAfter} seconds` : ''}.`
                    : `The address could not be verified: ${e.message}`;
            if (e.status === 400)
                email.setAttribute('aria-invalid', 'true');
        } finally {
            button.disabled = false;
            main.setAttribute('aria-busy', 'false');
        }
    }
    const form = h('form', { id: 'verify-form', novalidate: true },
        h('div', { class: 'field' }, h('label', { for: 'verify-email' }, 'E-mail address'), email,
            h('p', { class: 'hint', id: 'verify-hint' }, 'One verification costs one credit.')),
        err, button);
    form.addEventListener('submit', (ev) => {
        ev.preventDefault();
        run(email.value.trim());
    });
    clear(main, h('h1', {}, 'Verify an address'), form, out);
}
