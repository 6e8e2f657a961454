// accuracy.js: the accuracy report (#accuracy; GET /v1/reports/accuracy,
// issue 29): over the results verified between two times, how many of each
// classification, and of each provider, were later delivered, hard- or
// soft-bounced or complained of (the outcomes the account reported with
// POST /v1/feedback or a sender's webhook), the unknown share and how
// stable verdicts were for addresses verified twice. The two times are
// chosen in the user's time zone and sent as UTC.
import { api } from './api.js';
import { h, clear, when } from './dom.js';
import { classificationWords } from './words.js';

const DAY = 86400000;
const OUTCOMES = [['verified', 'Verified'], ['delivered', 'Delivered'], ['hard_bounce', 'Hard bounces'],
    ['soft_bounce', 'Soft bounces'], ['complaint', 'Complaints'], ['no_outcome', 'No outcome reported']];
const percent = (v) => `${(100 * v).toFixed(1)}%`;
const enc = encodeURIComponent;

// "2026-11-29T10:15" in the user's zone, for a datetime-local input
function localInput(d) {
    const p = (n) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}
// the ISO UTC time (seconds) of a datetime-local input's value, or null
function utcOf(v) {
    const d = new Date(v);
    return Number.isNaN(d.getTime()) ? null : `${d.toISOString().slice(0, 19)}Z`;
}

// tally(ID, CAPTION, FIRST, ROWS): a table of [name, label, tally] rows
function tally(id, caption, first, rows) {
    // (a region of its own, reachable with the keyboard, should it scroll)
    return h('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': caption }, h('table', { id, class: 'cards-narrow tally' },
        h('caption', {}, caption),
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, first), OUTCOMES.map(([, l]) => h('th', { scope: 'col' }, l)))),
        h('tbody', {}, rows.map(([name, label, t]) => h('tr', { 'data-name': name },
            h('th', { scope: 'row', 'data-label': first }, label),
            OUTCOMES.map(([k, l]) => h('td', { 'data-label': l, 'data-key': k, 'data-value': String(t[k]) },
                k !== 'verified' && k !== 'no_outcome' && t.verified ? `${t[k]} (${percent(t[k] / t.verified)})` : String(t[k]))))))));
}

function report(r) {
    const classes = Object.keys(r.by_classification);
    const providers = Object.keys(r.by_provider).sort();
    const st = r.stability;
    return [
        h('p', { id: 'accuracy-window' }, 'Results verified from ', when(r.since), ' to ', when(r.until),
            `: ${r.total.verified} in all, ${r.total.verified - r.total.no_outcome} with a reported outcome.`),
        h('div', { class: 'cards' },
            h('section', { class: 'card', 'aria-labelledby': 'unknown-label' },
                h('h2', { id: 'unknown-label' }, 'Unknown share'),
                h('p', { class: 'figure', id: 'accuracy-unknown', 'data-value': String(r.unknown_share) }, percent(r.unknown_share)),
                h('p', { class: 'hint' }, 'of the results had no verdict (classification unknown).')),
            h('section', { class: 'card', 'aria-labelledby': 'stability-label' },
                h('h2', { id: 'stability-label' }, 'Stability'),
                h('p', { class: 'figure', id: 'accuracy-stability', 'data-value': String(st.share_same),
                    'data-twice': String(st.addresses_verified_twice), 'data-same': String(st.same_classification) },
                st.addresses_verified_twice ? percent(st.share_same) : '—'),
                h('p', { class: 'hint' }, st.addresses_verified_twice
                    ? `${st.same_classification} of the ${st.addresses_verified_twice} addresses verified more than once got the same classification every time.`
                    : 'No address was verified more than once in this period.'))),
        h('h2', {}, 'By classification'),
        tally('accuracy-classes', 'What became of each classification', 'Classification',
            classes.map((c) => [c, classificationWords[c] || c, r.by_classification[c]])),
        h('h2', {}, 'By provider'),
        providers.length
            ? tally('accuracy-providers', 'What became of the results at each mail provider', 'Provider',
                providers.map((p) => [p, p === 'none' ? 'none (no mail server reached)' : p, r.by_provider[p]]))
            : h('p', { id: 'accuracy-no-providers' }, 'No results in this period.'),
        h('p', { class: 'hint' }, 'Send what happened to your mail with POST /v1/feedback or your sender\'s webhook ' +
            '(see the API documentation); each result counts under the latest outcome reported after it was verified.'),
    ];
}

export async function render(main, ctx) {
    const now = new Date();
    const since = h('input', { type: 'datetime-local', id: 'accuracy-since', name: 'since', value: localInput(new Date(now - 30 * DAY)) });
    const until = h('input', { type: 'datetime-local', id: 'accuracy-until', name: 'until', value: localInput(new Date(now.getTime() + 60000)) });
    const err = h('p', { class: 'error', role: 'alert', id: 'accuracy-error' });
    const out = h('div', { id: 'accuracy-out', 'aria-live': 'polite' });
    let n = 0;
    async function load() {
        const mine = ++n;
        const s = utcOf(since.value), u = utcOf(until.value);
        for (const [el, v] of [[since, s], [until, u]])
            el.setAttribute('aria-invalid', v ? 'false' : 'true');
        if (!s || !u) {
            err.textContent = 'Choose both times.';
            (s ? until : since).focus();
            return;
        }
        out.setAttribute('aria-busy', 'true');
        let r;
        try {
            r = await api('GET', `/v1/reports/accuracy?since=${enc(s)}&until=${enc(u)}`);
        } catch (e) {
            if (mine !== n || ctx.stale())
                return;
            err.dataset.code = e.code;
            err.textContent = e.code === 'feedback_unavailable'
                ? 'The accuracy report is not available on this service: its operator has not set up delivery feedback.'
                : `The report could not be made: ${e.message}`;
            if (e.details && (e.details.field === 'since' || e.details.field === 'until')) {
                const el = e.details.field === 'since' ? since : until;
                el.setAttribute('aria-invalid', 'true');
                el.focus();
            }
            clear(out);
            out.setAttribute('aria-busy', 'false');
            return;
        }
        if (mine !== n || ctx.stale())
            return;
        err.textContent = '';
        delete err.dataset.code;
        out.dataset.query = `since=${s}&until=${u}`;
        clear(out, report(r));
        out.setAttribute('aria-busy', 'false');
    }
    const form = h('form', { class: 'card', id: 'accuracy-form', novalidate: true,
        onsubmit: (ev) => { ev.preventDefault(); load(); } },
    h('div', { class: 'range' },
        h('div', { class: 'field' }, h('label', { for: 'accuracy-since' }, 'Verified from'), since),
        h('div', { class: 'field' }, h('label', { for: 'accuracy-until' }, 'to'), until)),
    h('p', { class: 'hint' }, 'Times in your time zone.'),
    h('button', { type: 'submit', id: 'accuracy-submit' }, 'Show the report'));
    clear(main, h('h1', {}, 'Accuracy'),
        h('p', {}, 'How right the verdicts were, judged by what happened to the mail you sent.'),
        form, err, out);
    await load();
}
