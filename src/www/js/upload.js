// upload.js: the upload page (#upload: a file picked or dropped, or an
// https URL; the column of the addresses from the file's header; preview
// on or off; an optional name) and the List Health
// Preview of an upload (#preview/JOB: the estimated status shares as a bar,
// the free checks, the estimated bounce rate, catch-all and unknown shares
// with their 95% ranges, the confidence, the credits; Confirm). While the
// preview is computed (202) the page says so and asks again every few
// seconds, in a box of fixed size. Each figure carries the API's own value
// in data-value (the browser test compares them with the API's preview).
import { api } from './api.js';
import { h, clear, when, notFound } from './dom.js';
import { jobStatusWords, describe, percent, range } from './words.js';

const POLL_MS = 2000;

function uploadError(e) {
    switch (e.code) {
    case 'insufficient_credits':
        return 'The account has no credits left: an upload needs a positive balance.';
    case 'file_too_large':
        return 'The file is larger than 50 MB. Split it into smaller files.';
    case 'invalid_source_url':
        return `This address cannot be used: ${e.message.replace(/^source_url: /, '')}`;
    case 'missing_file':
        return 'Choose a file, drop one here, or give an https:// address.';
    case 'too_many_jobs':
        return 'Too many lists are in progress on the account. Wait for one to finish or cancel one.';
    case 'upload_storage_exceeded':
        return 'The account stores too many uploaded files. Wait for jobs to finish or erase old ones.';
    case 'rate_limited':
        return `Too many requests just now${e.retryAfter ? `: try again in ${e.retryAfter} seconds` : ''}.`;
    default:
        return `The list was not uploaded: ${e.message}`;
    }
}

export async function render(main, ctx) {
    let picked = null;          // the File chosen or dropped
    const fileErr = h('p', { class: 'error', role: 'alert', id: 'upload-file-error' });
    const urlErr = h('p', { class: 'error', role: 'alert', id: 'upload-url-error' });
    const nameErr = h('p', { class: 'error', role: 'alert', id: 'upload-name-error' });
    const formErr = h('p', { class: 'error', role: 'alert', id: 'upload-error' });
    const file = h('input', { type: 'file', id: 'upload-file', name: 'file',
        accept: '.csv,.tsv,.txt,.xlsx,text/csv,text/plain', 'aria-describedby': 'upload-file-hint upload-file-error' });
    const chosen = h('p', { class: 'hint', id: 'upload-chosen', 'aria-live': 'polite' }, 'No file chosen yet.');
    const drop = h('div', { class: 'dropzone', id: 'upload-drop' },
        h('label', { for: 'upload-file' }, 'A file (.csv, .tsv, .txt or .xlsx, up to 50 MB)'),
        file,
        h('p', { class: 'hint', id: 'upload-file-hint' }, 'Choose a file, or drop it anywhere in this box.'),
        chosen, fileErr);
    const url = h('input', { type: 'text', inputmode: 'url', id: 'upload-url', name: 'source_url',
        autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'upload-url-hint upload-url-error' });
    const name = h('input', { type: 'text', id: 'upload-name', name: 'name', maxlength: 200,
        autocomplete: 'off', 'aria-describedby': 'upload-name-error' });
    const preview = h('input', { type: 'checkbox', id: 'upload-preview', name: 'preview', checked: true });
    // the column of the addresses, from the header read in the browser (a
    // text file's first line); left to the service unless chosen
    const column = h('select', { id: 'upload-column', name: 'email_column', 'aria-describedby': 'upload-column-hint upload-column-error' },
        h('option', { value: '' }, 'Found by the service'));
    const columnErr = h('p', { class: 'error', role: 'alert', id: 'upload-column-error' });
    const columnField = h('div', { class: 'field', id: 'upload-column-field', hidden: true },
        h('label', { for: 'upload-column' }, 'Column with the addresses'), column,
        h('p', { class: 'hint', id: 'upload-column-hint' }, 'The columns of the file\'s first line. Without a choice the service finds the column itself.'),
        columnErr);
    let reading = 0;
    async function headers(f) {
        const mine = ++reading;
        column.replaceChildren(h('option', { value: '' }, 'Found by the service'));
        columnField.hidden = true;
        if (!f || !/\.(csv|tsv|txt)$/i.test(f.name))
            return;
        let first = '';
        try {
            first = (await f.slice(0, 65536).text()).split(/\r?\n/)[0].replace(/^\uFEFF/, '');
        } catch (e) {
            return;
        }
        if (mine !== reading)
            return;
        const sep = first.includes('\t') ? '\t' : first.includes(';') && !first.includes(',') ? ';' : ',';
        const cols = first.split(sep).map((c) => c.trim().replace(/^"(.*)"$/, '$1')).filter((c) => c !== '');
        if (cols.length < 2 || cols.some((c) => c.includes('@')))
            return;     // one column, or no header: nothing to choose
        for (const c of cols)
            column.appendChild(h('option', { value: c }, c));
        columnField.hidden = false;
        column.dataset.columns = JSON.stringify(cols);
    }
    const button = h('button', { type: 'submit', id: 'upload-submit' }, 'Upload');

    function choose(f) {
        picked = f;
        chosen.textContent = f ? `Chosen: ${f.name} (${f.size} bytes)` : 'No file chosen yet.';
        fileErr.textContent = '';
        file.removeAttribute('aria-invalid');
        headers(f);
    }
    file.addEventListener('change', () => choose(file.files.length ? file.files[0] : null));
    drop.addEventListener('dragover', (ev) => { ev.preventDefault(); drop.classList.add('over'); });
    drop.addEventListener('dragleave', () => drop.classList.remove('over'));
    drop.addEventListener('drop', (ev) => {
        ev.preventDefault();
        drop.classList.remove('over');
        if (ev.dataTransfer && ev.dataTransfer.files.length)
            choose(ev.dataTransfer.files[0]);
    });

    function mark(input, err, msg) {
        err.textContent = msg;
        input.setAttribute('aria-invalid', 'true');
        input.focus();
    }

    const form = h('form', { id: 'upload-form', novalidate: true },
        h('section', { class: 'card', 'aria-labelledby': 'upload-src-title' },
            h('h2', { id: 'upload-src-title' }, 'The list'),
            drop,
            h('div', { class: 'field' }, h('label', { for: 'upload-url' }, 'Or the https:// address of the file'), url,
                h('p', { class: 'hint', id: 'upload-url-hint' }, 'A public address; the service downloads the file itself.'),
                urlErr),
            columnField),
        h('div', { class: 'field' }, h('label', { for: 'upload-name' }, 'Name (optional)'), name, nameErr),
        h('div', { class: 'field' }, h('label', { class: 'check', for: 'upload-preview' }, preview,
            'Show me a free List Health Preview first; nothing is charged until I confirm')),
        formErr, button);

    form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        for (const [i, e] of [[file, fileErr], [url, urlErr], [name, nameErr], [column, columnErr]]) {
            e.textContent = '';
            i.removeAttribute('aria-invalid');
        }
        formErr.textContent = '';
        const src = url.value.trim();
        if (picked && src)
            return mark(url, urlErr, 'Give either a file or an address, not both.');
        if (!picked && !src)
            return mark(file, fileErr, 'Choose a file, drop one here, or give an https:// address.');
        if (src && !/^https:\/\//i.test(src))
            return mark(url, urlErr, 'The address must start with https://.');
        let body;
        if (picked) {
            body = new FormData();
            body.append('file', picked, picked.name);
            body.append('preview', preview.checked ? 'true' : 'false');
            if (name.value.trim())
                body.append('name', name.value.trim());
            if (column.value)
                body.append('email_column', column.value);
        } else {
            body = { source_url: src, preview: preview.checked };
            if (name.value.trim())
                body.name = name.value.trim();
        }
        button.disabled = true;
        main.setAttribute('aria-busy', 'true');
        try {
            const r = await api('POST', '/v1/verify/bulk/upload', body);
            location.hash = preview.checked ? `#preview/${r.job_id}` : `#job/${r.job_id}`;
        } catch (e) {
            const field = e.details && e.details.field;
            if (field === 'source_url' || (e.code === 'invalid_url' || /url/i.test(e.code || '')) && src)
                mark(url, urlErr, uploadError(e));
            else if (field === 'name')
                mark(name, nameErr, uploadError(e));
            else if (picked && column.value && (field === 'email_column' || /column/i.test(e.code || '')))
                mark(column, columnErr, uploadError(e));
            else if (picked && (field === 'file' || e.code === 'file_too_large' || e.code === 'missing_file' || e.status === 400 || e.status === 413))
                mark(file, fileErr, uploadError(e));
            else
                formErr.textContent = uploadError(e);
            if (fileErr.textContent || urlErr.textContent || nameErr.textContent || columnErr.textContent)
                formErr.textContent = '';
            const shown = [fileErr, urlErr, nameErr, columnErr, formErr].find((x) => x.textContent);
            if (shown)
                shown.dataset.code = e.code;
            main.setAttribute('aria-busy', 'false');
        } finally {
            button.disabled = false;
        }
    });
    clear(main, h('h1', {}, 'Upload a list'), form);
}

// ---- the preview of an upload

const bars = [
    ['deliverable', 'Deliverable'],
    ['risky', 'Risky'],
    ['undeliverable', 'Undeliverable'],
    ['unknown', 'Unknown'],
];

function fig(field, value, ...shown) {
    return h('dd', { 'data-field': field, 'data-value': Array.isArray(value) ? JSON.stringify(value) : String(value) },
        ...(shown.length ? shown : [String(value)]));
}

function chart(p) {
    const by = p.estimated_by_status;
    const total = bars.reduce((a, [k]) => a + (by[k] || 0), 0);
    const share = (n) => (total ? (100 * n) / total : 0);
    const seg = bars.map(([k, label]) => h('span', { class: `seg seg-${k}`, 'data-status': k,
        'data-value': String(by[k] || 0), title: `${label}: ${by[k] || 0}` }));
    // (widths are set through the CSSOM: the CSP allows no inline style)
    bars.forEach(([k], i) => { seg[i].style.width = `${share(by[k] || 0)}%`; });
    return h('figure', { class: 'chart', id: 'preview-chart' },
        h('div', { class: 'bar', role: 'img', 'aria-label': 'Estimated status shares: ' +
            bars.map(([k, l]) => `${l} ${percent(total ? (by[k] || 0) / total : 0)}`).join(', ') }, seg),
        h('figcaption', {}, h('ul', { class: 'legend' }, bars.map(([k, label]) =>
            h('li', {}, h('span', { class: `swatch seg-${k}`, 'aria-hidden': 'true' }),
                `${label}: `, h('span', { 'data-field': `estimated_by_status.${k}`, 'data-value': String(by[k] || 0) },
                    String(by[k] || 0)), ` (${percent(total ? (by[k] || 0) / total : 0)})`)))));
}

const freeChecks = [
    ['syntax_invalid', 'Not an e-mail address'],
    ['no_mx', 'Domain without a mail server'],
    ['disposable', 'Throw-away addresses'],
    ['role_based', 'Role addresses (info@, support@…)'],
    ['suppressed', 'On your suppression list'],
    ['free_provider', 'At free mail providers'],
    ['resolved_without_smtp', 'Settled without asking a mail server'],
    ['needs_smtp', 'Need a mail server\'s answer'],
];

function previewView(job, p, onConfirm) {
    const fc = p.free_checks;
    const shareRow = (field, label, v, iv) => [h('dt', {}, label),
        h('dd', {}, h('span', { 'data-field': field, 'data-value': String(v) }, percent(v)),
            ' (95% range ', h('span', { 'data-field': `${field}_interval`, 'data-value': JSON.stringify(iv) }, range(iv)), ')')];
    const confirmErr = h('p', { class: 'error', role: 'alert', id: 'confirm-error' });
    const confirm = h('button', { type: 'button', id: 'preview-confirm' }, `Confirm and verify (${p.credits_needed} credits)`);
    confirm.addEventListener('click', () => onConfirm(confirm, confirmErr));
    return h('div', { id: 'preview' },
        h('section', { class: 'card', 'aria-labelledby': 'shares-title' },
            h('h2', { id: 'shares-title' }, 'Estimated status of the list'),
            chart(p),
            h('dl', { class: 'result' },
                h('dt', {}, 'Addresses'), fig('total_emails', p.total_emails),
                h('dt', {}, 'Duplicates removed'), fig('duplicates_removed', p.duplicates_removed),
                shareRow('estimated_bounce_rate', 'Estimated bounce rate', p.estimated_bounce_rate, p.estimated_bounce_rate_interval),
                shareRow('catch_all_share', 'Catch-all share', p.catch_all_share, p.catch_all_share_interval),
                shareRow('unknown_share', 'Unknown share', p.unknown_share, p.unknown_share_interval),
                h('dt', {}, 'Confidence'), fig('confidence', p.confidence,
                    p.confidence === 'high' ? 'High: the ranges are narrow.' : p.confidence === 'medium'
                        ? 'Medium: the ranges are a few points wide.' : 'Low: the ranges are wide; the real figures may differ a lot.'),
                h('dt', {}, 'Computed'), h('dd', {}, when(p.computed_at)))),
        h('section', { class: 'card', 'aria-labelledby': 'free-title' },
            h('h2', { id: 'free-title' }, 'Free checks'),
            h('dl', { class: 'result' }, freeChecks.map(([k, label]) => [h('dt', {}, label),
                fig(`free_checks.${k}`, fc[k] === undefined ? 0 : fc[k])])),
            h('p', { class: 'hint', 'data-field': 'smtp_sample.size', 'data-value': String(p.smtp_sample.size) },
                `Mail servers asked, for a sample: ${p.smtp_sample.size} ${p.smtp_sample.size === 1 ? 'address' : 'addresses'}.`),
            p.smtp_sample.method ? h('details', {}, h('summary', {}, 'How the sample and the ranges are made'),
                h('p', { class: 'hint' }, p.smtp_sample.method)) : null),
        h('section', { class: 'card', 'aria-labelledby': 'credits-title' },
            h('h2', { id: 'credits-title' }, 'Credits'),
            h('dl', { class: 'result' },
                h('dt', {}, 'Credits needed'), fig('credits_needed', p.credits_needed),
                h('dt', {}, 'Estimated after refunds'), fig('estimated_credits_after_refunds', p.estimated_credits_after_refunds,
                    `${p.estimated_credits_after_refunds} (addresses that end unknown are refunded)`)),
            job.status === 'awaiting_confirmation' ? [confirmErr, h('div', { class: 'actions' }, confirm)]
                : h('p', { class: 'notice' }, `This list is ${describe(jobStatusWords, job.status)}`)));
}

export async function renderPreview(main, ctx) {
    const id = ctx.param;
    const status = h('div', { class: 'waiting', id: 'preview-status', 'aria-live': 'polite' });
    const out = h('div', { id: 'preview-out' });
    clear(main, h('h1', {}, 'List Health Preview'), status, out);
    let r;
    try {
        r = await api('POST', `/v1/verify/bulk/${encodeURIComponent(id)}/preview`, undefined, { withStatus: true });
    } catch (e) {
        if (e.status === 404) {
            notFound(main, 'List Health Preview', 'list');
            return;
        }
        throw e;
    }
    const onConfirm = async (button, err) => {
        err.textContent = '';
        button.disabled = true;
        try {
            await api('POST', `/v1/verify/bulk/${encodeURIComponent(id)}/confirm`);
            location.hash = `#job/${id}`;
        } catch (e) {
            err.dataset.code = e.code;
            err.textContent = e.code === 'insufficient_credits'
                ? `There are not enough credits: this list needs ${e.details ? e.details.required : 'more'}, the account has ${e.details ? e.details.available : 'fewer'}. Buy credits or remove addresses, then confirm again.`
                : e.code === 'job_not_awaiting_confirmation'
                    ? `This list can no longer be confirmed: it is ${e.details ? e.details.status : 'no longer waiting'}.`
                    : `The list was not confirmed: ${e.message}`;
            button.disabled = false;
            button.focus();
        }
    };
    const show = (res) => {
        const d = res.data;
        if (res.status === 202) {
            status.dataset.state = 'computing';
            clear(status, h('p', { class: 'loading', id: 'preview-waiting' },
                d.status === 'ingesting' ? 'The list is being read and the preview computed. This page updates by itself.'
                    : 'The preview is being computed again. This page updates by itself.'));
            if (d.preview)
                clear(out, previewView(d, d.preview, onConfirm));
            return false;
        }
        status.dataset.state = 'ready';
        clear(status, h('p', {}, 'Preview of ', h('strong', {}, id), ' (', describe(jobStatusWords, d.status), ')'));
        clear(out, previewView(d, d.preview, onConfirm));
        return true;
    };
    if (show(r))
        return;
    // poll until computed, while this page is shown; the view counts as
    // drawn (the waiting state is a page of its own)
    const poll = async () => {
        if (ctx.stale())
            return;
        try {
            const res = await api('POST', `/v1/verify/bulk/${encodeURIComponent(id)}/preview`, undefined, { withStatus: true });
            if (ctx.stale())
                return;
            if (show(res))
                return;
        } catch (e) {
            if (ctx.stale())
                return;
            clear(status, h('p', { class: 'error', role: 'alert', id: 'preview-error' }, `The preview could not be read: ${e.message}`));
            if (e.status === 409 || e.status === 404)
                return;
        }
        setTimeout(poll, POLL_MS);
    };
    setTimeout(poll, POLL_MS);
}
