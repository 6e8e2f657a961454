// jobs.js: the jobs page (#jobs: the account's jobs with a status filter,
// the running ones with a live progress bar) and one job's page (#job/JOB:
// live progress from /progress with rate and ETA, cancel after a
// confirmation, and once completed its results, a table with a
// classification filter and paging, and the download links). Progress is
// drawn in boxes of fixed size, so nothing moves while it updates.
import { api } from './api.js';
import { h, clear, when, waitWords, notFound } from './dom.js';
import { jobStatusWords, classificationWords, describe } from './words.js';

const POLL_MS = 1500;
const PAGE = 10;
const ended = (s) => s === 'completed' || s === 'failed' || s === 'cancelled';
const running = (s) => s === 'ingesting' || s === 'pending' || s === 'processing';
const enc = encodeURIComponent;

function progressBar(id, processed, total, percent) {
    const p = h('progress', { id, max: total || 1, value: processed,
        'aria-label': `${processed} of ${total} addresses verified` });
    return h('div', { class: 'progress' }, p,
        h('span', { class: 'progress-text', 'data-field': 'progress', 'data-value': `${processed}/${total}` },
            `${processed} / ${total} (${percent}%)`));
}

// ---- the list
export async function render(main, ctx) {
    const filter = h('select', { id: 'jobs-status', name: 'status' },
        h('option', { value: '' }, 'All'),
        Object.keys(jobStatusWords).map((s) => h('option', { value: s }, describe(jobStatusWords, s))));
    const body = h('div', { id: 'jobs-out', 'aria-live': 'polite' });
    const err = h('p', { class: 'error', role: 'alert', id: 'jobs-error' });
    let n = 0;
    async function load() {
        const mine = ++n;
        const q = filter.value ? `&status=${enc(filter.value)}` : '';
        let r;
        try {
            r = await api('GET', `/v1/jobs?limit=50${q}`);
        } catch (e) {
            err.textContent = `The jobs could not be read: ${e.message}`;
            return;
        }
        if (mine !== n || ctx.stale())
            return;
        // the rate and time left of the jobs not ended (the first 10), from
        // their /progress, read before the table is drawn (no jump after)
        const live = new Map();
        await Promise.all(r.data.filter((j) => !ended(j.status)).slice(0, 10).map(async (j) => {
            try {
                live.set(j.job_id, await api('GET', `/v1/jobs/${enc(j.job_id)}/progress`));
            } catch (e) { /* shown without */ }
        }));
        if (mine !== n || ctx.stale())
            return;
        const liveWords = (p) => h('span', { class: 'hint live', 'data-rate': String(p.rate_per_minute),
            'data-eta': p.eta_seconds === null ? 'null' : String(p.eta_seconds) },
        `${p.rate_per_minute} a minute; ${p.eta_seconds === null ? 'time left not known yet' : `about ${waitWords(p.eta_seconds)} left`}`);
        err.textContent = '';
        body.dataset.filter = filter.value;
        body.dataset.total = String(r.total);
        if (!r.data.length) {
            clear(body, h('p', { id: 'jobs-empty' }, filter.value ? 'No job has this status.' : 'No jobs yet. Upload a list to start one.'));
            return;
        }
        clear(body, h('div', { class: 'scroll' }, h('table', { class: 'cards-narrow', id: 'jobs-table' },
            h('caption', {}, `${r.total} ${r.total === 1 ? 'job' : 'jobs'}${filter.value ? `, ${describe(jobStatusWords, filter.value)}` : ''}`),
            h('thead', {}, h('tr', {}, ['Name', 'Status', 'Progress', 'Created'].map((t) => h('th', { scope: 'col' }, t)))),
            h('tbody', {}, r.data.map((j) => h('tr', { 'data-job-id': j.job_id, 'data-status': j.status },
                h('td', { 'data-label': 'Name' }, h('a', { href: `#job/${j.job_id}` }, j.name || j.job_id)),
                h('td', { 'data-label': 'Status' }, describe(jobStatusWords, j.status)),
                h('td', { 'data-label': 'Progress' }, progressBar(`p-${j.job_id}`, j.processed_emails, j.total_emails,
                    j.total_emails ? Math.floor((100 * j.processed_emails) / j.total_emails) : 0),
                live.has(j.job_id) ? liveWords(live.get(j.job_id)) : null),
                h('td', { 'data-label': 'Created' }, when(j.created_at))))))));
        body.dataset.loaded = String(n);
        // (refreshed while a job moves on by itself: not for one that
        // waits for its confirmation)
        if (r.data.some((j) => running(j.status)))
            setTimeout(() => { if (!ctx.stale() && mine === n) load(); }, POLL_MS * 2);
    }
    filter.addEventListener('change', () => load());
    clear(main, h('h1', {}, 'Jobs'),
        h('p', {}, h('a', { href: '#upload' }, 'Upload a list')),
        h('div', { class: 'field' }, h('label', { for: 'jobs-status' }, 'Show jobs that are'), filter),
        err, body);
    await load();
}

// ---- one job
function downloads(id, type) {
    const link = (filter, orig, label) => h('li', {}, h('a', {
        href: `/v1/jobs/${enc(id)}/download?format=csv${filter ? `&filter=${filter}` : ''}${orig ? '&include_original=true' : ''}`,
        download: '', 'data-filter': filter || 'all', 'data-original': orig ? 'true' : 'false',
    }, label));
    const filters = [['', 'Every address'], ['deliverable', 'Deliverable only'], ['send_safe', 'Safe to send (deliverable and safe catch-alls)'],
        ['risky', 'Risky only'], ['undeliverable', 'Undeliverable only'], ['unknown', 'Unknown only']];
    return h('section', { class: 'card', id: 'downloads', 'aria-labelledby': 'dl-title' },
        h('h2', { id: 'dl-title' }, 'Download (CSV)'),
        h('ul', { class: 'links' }, filters.map(([f, l]) => link(f, false, l))),
        type === 'upload' ? [h('p', {}, 'With your file\'s own columns first:'),
            h('ul', { class: 'links' }, filters.map(([f, l]) => link(f, true, `${l}, with your columns`)))] : null);
}

function results(id, ctx) {
    const cls = h('select', { id: 'results-class', name: 'classification' }, h('option', { value: '' }, 'All'),
        Object.entries(classificationWords).map(([k, v]) => h('option', { value: k }, v)));
    const out = h('div', { id: 'results-out' });
    const err = h('p', { class: 'error', role: 'alert', id: 'results-error' });
    const prev = h('button', { type: 'button', class: 'secondary', id: 'results-prev' }, 'Previous page');
    const next = h('button', { type: 'button', class: 'secondary', id: 'results-next' }, 'Next page');
    const where = h('p', { id: 'results-page', 'aria-live': 'polite' });
    let page = 1;
    let n = 0;
    async function load() {
        const mine = ++n;
        const q = `page=${page}&limit=${PAGE}${cls.value ? `&classification=${enc(cls.value)}` : ''}`;
        out.setAttribute('aria-busy', 'true');
        let r;
        try {
            r = await api('GET', `/v1/jobs/${enc(id)}/results?${q}`);
        } catch (e) {
            if (mine === n)
                err.textContent = `The results could not be read: ${e.message}`;
            return;
        }
        if (mine !== n || ctx.stale())
            return;
        err.textContent = '';
        const pages = Math.max(1, Math.ceil(r.total / PAGE));
        where.textContent = `Page ${r.page} of ${pages} (${r.total} ${r.total === 1 ? 'address' : 'addresses'})`;
        prev.disabled = page <= 1;
        next.disabled = page >= pages;
        clear(out, h('div', { class: 'scroll' }, h('table', { class: 'cards-narrow', id: 'results-table' },
            h('thead', {}, h('tr', {}, ['Address', 'Classification', 'Status', 'Reason', 'Sub-status', 'Score'].map((t) => h('th', { scope: 'col' }, t)))),
            h('tbody', {}, r.results.map((x) => h('tr', { 'data-email': x.email, 'data-classification': x.classification },
                h('td', { 'data-label': 'Address' }, x.email),
                h('td', { 'data-label': 'Classification' }, describe(classificationWords, x.classification)),
                h('td', { 'data-label': 'Status', 'data-value': x.status }, x.status),
                h('td', { 'data-label': 'Reason', 'data-value': x.reason }, x.reason),
                h('td', { 'data-label': 'Sub-status', 'data-value': x.sub_status === null ? 'null' : x.sub_status }, x.sub_status || ''),
                h('td', { 'data-label': 'Score', 'data-value': String(x.score) }, String(x.score))))))));
        out.dataset.query = q;
        out.setAttribute('aria-busy', 'false');
    }
    cls.addEventListener('change', () => { page = 1; load(); });
    prev.addEventListener('click', () => { page -= 1; load(); });
    next.addEventListener('click', () => { page += 1; load(); });
    const sec = h('section', { class: 'card', id: 'results', 'aria-labelledby': 'results-title' },
        h('h2', { id: 'results-title' }, 'Results'),
        h('div', { class: 'field' }, h('label', { for: 'results-class' }, 'Show addresses classified as'), cls),
        err, out, h('div', { class: 'actions' }, prev, where, next));
    return { sec, load };
}

export async function renderJob(main, ctx) {
    const id = ctx.param;
    let job;
    try {
        job = await api('GET', `/v1/jobs/${enc(id)}`);
    } catch (e) {
        if (e.status === 404) {
            notFound(main, 'Job', 'job');
            return;
        }
        throw e;
    }
    const status = h('span', { id: 'job-status', 'data-value': job.status }, describe(jobStatusWords, job.status));
    const bar = h('progress', { id: 'job-progress', max: job.total_emails || 1, value: job.processed_emails,
        'aria-label': 'Addresses verified' });
    const count = h('span', { id: 'job-count', 'data-value': `${job.processed_emails}/${job.total_emails}` });
    const rate = h('span', { id: 'job-rate' }, '—');
    const eta = h('span', { id: 'job-eta' }, '—');
    const cancelErr = h('p', { class: 'error', role: 'alert', id: 'cancel-error' });
    const notice = h('p', { class: 'notice', role: 'status', id: 'job-notice' });
    const cancel = h('button', { type: 'button', class: 'danger', id: 'job-cancel' }, 'Cancel this job');
    const dlg = h('dialog', { id: 'cancel-dialog', 'aria-labelledby': 'cancel-title' },
        h('h2', { id: 'cancel-title' }, 'Cancel this job?'),
        h('p', {}, 'The addresses not verified yet are not verified, and their credits are refunded. This cannot be undone.'),
        h('div', { class: 'actions' },
            h('button', { type: 'button', class: 'secondary', id: 'cancel-keep', onclick: () => dlg.close() }, 'Keep the job'),
            h('button', { type: 'button', class: 'danger', id: 'cancel-confirm' }, 'Cancel the job')));
    const tail = h('div', { id: 'job-tail' });
    const sizeText = (p) => `${p.processed_emails} / ${p.total_emails} (${p.percent}%)`;
    count.textContent = sizeText({ ...job, percent: job.total_emails ? Math.floor((100 * job.processed_emails) / job.total_emails) : 0 });

    function settle(st) {
        status.dataset.value = st;
        status.textContent = describe(jobStatusWords, st);
        // (kept in its place, invisible and out of the tab order: the
        // box does not shrink when the job ends)
        cancel.classList.toggle('gone', ended(st));
        cancel.disabled = ended(st);
    }
    settle(job.status);
    cancel.addEventListener('click', () => { cancelErr.textContent = ''; dlg.showModal(); document.getElementById('cancel-keep').focus(); });
    dlg.querySelector('#cancel-confirm').addEventListener('click', async (ev) => {
        const b = ev.currentTarget;
        b.disabled = true;
        try {
            const r = await api('DELETE', `/v1/jobs/${enc(id)}`);
            dlg.close();
            settle(r.status);
            notice.textContent = `The job is cancelled; ${r.credits_refunded} credits were refunded.`;
        } catch (e) {
            dlg.close();
            cancelErr.dataset.code = e.code;
            cancelErr.textContent = e.code === 'job_not_cancellable'
                ? 'The job can no longer be cancelled: it has ended.'
                : `The job was not cancelled: ${e.message}`;
        } finally {
            b.disabled = false;
        }
    });

    async function finish() {
        if (job.status !== 'completed')
            return;
        const r = results(id, ctx);
        clear(tail, r.sec, downloads(id, job.type));
        await r.load();
    }

    clear(main, h('h1', {}, job.name ? `Job “${job.name}”` : 'Job'),
        h('section', { class: 'card', 'aria-labelledby': 'progress-title' },
            h('h2', { id: 'progress-title' }, 'Progress'),
            h('dl', { class: 'result' },
                h('dt', {}, 'Job'), h('dd', {}, h('code', {}, id)),
                h('dt', {}, 'Status'), h('dd', {}, status),
                h('dt', {}, 'Created'), h('dd', {}, when(job.created_at))),
            h('div', { class: 'progress' }, bar, count),
            h('dl', { class: 'result' },
                h('dt', {}, 'Rate'), h('dd', {}, rate),
                h('dt', {}, 'Time left'), h('dd', {}, eta)),
            job.status === 'awaiting_confirmation' ? h('p', {}, h('a', { href: `#preview/${id}` }, 'See the preview and confirm')) : null,
            job.error ? h('p', { class: 'error', id: 'job-failure', 'data-code': job.error.code || '' },
                `The job failed: ${job.error.message || job.error.code}`) : null,
            notice, cancelErr, h('div', { class: 'actions' }, cancel)),
        dlg, tail);
    if (ended(job.status)) {
        await finish();
        return;
    }
    // live progress while the page is shown (count's data-updates: the
    // answers of /progress drawn so far)
    let updates = 0;
    const poll = async () => {
        if (ctx.stale())
            return;
        try {
            const p = await api('GET', `/v1/jobs/${enc(id)}/progress`);
            if (ctx.stale())
                return;
            bar.max = p.total_emails || 1;
            bar.value = p.processed_emails;
            count.dataset.value = `${p.processed_emails}/${p.total_emails}`;
            count.textContent = sizeText(p);
            rate.textContent = `${p.rate_per_minute} addresses a minute`;
            rate.dataset.value = String(p.rate_per_minute);
            eta.textContent = ended(p.status) ? 'None: the job has ended.'
                : p.eta_seconds === null ? 'Not known yet.' : `About ${waitWords(p.eta_seconds)}`;
            eta.dataset.value = p.eta_seconds === null ? 'null' : String(p.eta_seconds);
            updates += 1;
            count.dataset.updates = String(updates);
            if (p.status !== status.dataset.value)
                settle(p.status);
            if (ended(p.status)) {
                job.status = p.status;
                await finish();
                return;
            }
        } catch (e) {
            if (ctx.stale())
                return;
            cancelErr.textContent = `The progress could not be read: ${e.message}`;
        }
        setTimeout(poll, POLL_MS);
    };
    await poll();
}
