// suppressions.js: the account's suppression list (#suppressions):
// addresses and whole domains ("@example.com") it never wants to mail. One
// entry added (POST /v1/suppressions), a file imported (its entries, one a
// line, in one POST: all or none, the API's counts shown), a search and
// pages of the list (GET /v1/suppressions?q=&page=), an entry removed after
// a confirmation (DELETE /v1/suppressions/ENTRY).
import { api } from './api.js';
import { h, clear, when, plural } from './dom.js';
import { confirmDialog } from './widgets.js';

const PAGE = 20;
const IMPORT_MAX = 10000;               // entries in one POST (the API's)
const FILE_MAX = 4 * 1024 * 1024;       // bytes of a file read in the browser
const enc = encodeURIComponent;

// fileEntries(TEXT): [{entry, line}] of a file: one entry a line, or the
// first column of a CSV (quotes taken off); blank lines and '#' comments
// skipped, and a first line that holds no '@' (a header such as "email")
export function fileEntries(text) {
    const out = [];
    const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
    lines.forEach((raw, i) => {
        let v = raw.trim();
        if (!v || v.startsWith('#'))
            return;
        const m = /^"((?:[^"]|"")*)"/.exec(v);
        v = m ? m[1].replace(/""/g, '"') : v.split(/[,;\t]/)[0];
        v = v.trim();
        if (!v)
            return;
        if (!out.length && !v.includes('@') && !lines.slice(0, i).some((l) => l.trim() && !l.trim().startsWith('#')))
            return;
        out.push({ entry: v, line: i + 1 });
    });
    return out;
}

// countWords(R): the API's counts of an add, in words
function countWords(r) {
    return `${plural(r.added, 'entry', 'entries')} added, ${plural(r.existing, 'entry was', 'entries were')} on the list already.`;
}

// refusal(E, ENTRIES): why the API refused entries, in words (the line of
// the file for a bad entry, with ENTRIES from fileEntries)
function refusal(e, entries) {
    const m = e.details && typeof e.details.field === 'string' && /^entries\[(\d+)\]$/.exec(e.details.field);
    if (m && entries && entries[Number(m[1])]) {
        const x = entries[Number(m[1])];
        return `Line ${x.line} (“${x.entry}”) is not an e-mail address or @domain, so nothing was imported. ` +
            'Correct or remove that line, then import the file again.';
    }
    if (e.code === 'suppression_limit_reached')
        return `Nothing was added: the list would be longer than your account allows (${e.details.limit} entries). Remove entries first.`;
    return e.message;
}

export async function render(main, { stale }) {
    const notice = h('p', { class: 'notice', role: 'status', id: 'suppressions-notice' });
    const del = confirmDialog('suppression-delete-dialog', 'Remove');
    const listTitle = h('h2', { id: 'suppressions-list-title', tabindex: '-1' }, 'The list');

    // ---- the list: search and pages
    const out = h('div', { id: 'suppressions-out' });
    const listErr = h('p', { class: 'error', role: 'alert', id: 'suppressions-error' });
    const search = h('input', { type: 'search', id: 'suppression-search', name: 'q', maxlength: 332, autocomplete: 'off',
        spellcheck: 'false', 'aria-describedby': 'suppression-search-hint' });
    const searchBtn = h('button', { type: 'submit', class: 'secondary', id: 'suppression-search-go' }, 'Search');
    const searchForm = h('form', { role: 'search', id: 'suppression-search-form', 'aria-label': 'Search the list' },
        h('div', { class: 'field' }, h('label', { for: 'suppression-search' }, 'Search for'),
            h('div', { class: 'inline' }, search, searchBtn),
            h('p', { class: 'hint', id: 'suppression-search-hint' }, 'Part of an address or domain. Empty: the whole list.')));
    const prev = h('button', { type: 'button', class: 'secondary', id: 'suppressions-prev' }, 'Previous page');
    const next = h('button', { type: 'button', class: 'secondary', id: 'suppressions-next' }, 'Next page');
    const where = h('p', { id: 'suppressions-page', 'aria-live': 'polite' });
    let page = 1;
    let q = '';
    let n = 0;

    function askDelete(x) {
        notice.textContent = '';
        del.ask('Remove from the list?', `Remove ${x.entry} from the suppression list? ` +
            'Jobs made from then on verify and return it like any other address.', async () => {
            try {
                await api('DELETE', `/v1/suppressions/${enc(x.entry)}`);
            } catch (e) {
                throw new Error(`${x.entry} was not removed: ${e.message}`);
            }
            notice.textContent = `${x.entry} is no longer on the list.`;
            await load();
            return listTitle;
        });
    }

    async function load() {
        const mine = ++n;
        const query = `page=${page}&limit=${PAGE}${q ? `&q=${enc(q)}` : ''}`;
        out.setAttribute('aria-busy', 'true');
        let r;
        try {
            r = await api('GET', `/v1/suppressions?${query}`);
        } catch (e) {
            if (mine === n && !stale()) {
                listErr.textContent = `The list could not be read: ${e.message}`;
                if (e.details && e.details.field === 'q')
                    search.setAttribute('aria-invalid', 'true');
                out.setAttribute('aria-busy', 'false');
            }
            return;
        }
        if (mine !== n || stale())
            return;
        // (the last entry of the last page removed: the page before)
        if (!r.data.length && page > 1 && r.total > 0) {
            page = Math.ceil(r.total / PAGE);
            await load();
            return;
        }
        listErr.textContent = '';
        search.removeAttribute('aria-invalid');
        const pages = Math.max(1, Math.ceil(r.total / PAGE));
        out.dataset.query = query;
        out.dataset.total = String(r.total);
        prev.disabled = page <= 1;
        next.disabled = page >= pages;
        where.textContent = r.total ? `Page ${page} of ${pages}` : '';
        if (!r.data.length)
            clear(out, h('p', { id: 'suppressions-empty' }, q ? `No entry holds “${q}”.` : 'The list is empty.'));
        else
            clear(out, h('div', { class: 'scroll' }, h('table', { class: 'cards-narrow', id: 'suppressions-table' },
                h('caption', {}, q ? `${plural(r.total, 'entry holds', 'entries hold')} “${q}”` : `${plural(r.total, 'entry', 'entries')}, the newest first`),
                h('thead', {}, h('tr', {}, ['Entry', 'Added', 'Action'].map((t) => h('th', { scope: 'col' }, t)))),
                h('tbody', {}, r.data.map((x) => h('tr', { 'data-entry': x.entry },
                    h('td', { 'data-label': 'Entry' }, h('code', {}, x.entry)),
                    h('td', { 'data-label': 'Added' }, when(x.created_at)),
                    h('td', { 'data-label': 'Action' }, h('button', { type: 'button', class: 'danger delete',
                        'aria-label': `Remove ${x.entry} from the list`, onclick: () => askDelete(x) }, 'Remove'))))))));
        out.setAttribute('aria-busy', 'false');
    }
    searchForm.addEventListener('submit', (ev) => {
        ev.preventDefault();
        notice.textContent = '';
        q = search.value.trim();
        page = 1;
        load();
    });
    prev.addEventListener('click', () => { page -= 1; load(); });
    next.addEventListener('click', () => { page += 1; load(); });

    // ---- one entry
    const entry = h('input', { type: 'text', id: 'suppression-entry', name: 'entry', required: true, autocomplete: 'off',
        spellcheck: 'false', maxlength: 332, 'aria-describedby': 'suppression-entry-hint' });
    const addErr = h('p', { class: 'error', role: 'alert', id: 'suppression-add-error' });
    const addBtn = h('button', { type: 'submit', id: 'suppression-add' }, 'Add to the list');
    const addForm = h('form', { id: 'suppression-add-form', novalidate: true, 'aria-labelledby': 'suppression-add-title' },
        h('div', { class: 'field' }, h('label', { for: 'suppression-entry' }, 'Address or @domain'), entry,
            h('p', { class: 'hint', id: 'suppression-entry-hint' }, 'An address (jane@example.com) or a whole domain (@example.com).')),
        addErr, addBtn);
    addForm.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        addErr.textContent = '';
        notice.textContent = '';
        entry.removeAttribute('aria-invalid');
        const v = entry.value.trim();
        if (!v) {
            addErr.textContent = 'Write the address or @domain to add.';
            entry.setAttribute('aria-invalid', 'true');
            entry.focus();
            return;
        }
        addBtn.disabled = true;
        try {
            const r = await api('POST', '/v1/suppressions', { entries: [v] });
            notice.textContent = r.added ? `${v} is on the list now.` : `${v} was on the list already.`;
            addForm.reset();
            q = '';
            search.value = '';
            page = 1;
            await load();
        } catch (e) {
            addErr.dataset.code = e.code;
            addErr.textContent = e.details && e.details.field === 'entries[0]'
                ? `${v} is not an e-mail address or @domain.` : `It was not added: ${refusal(e, null)}`;
            entry.setAttribute('aria-invalid', 'true');
            entry.focus();
        } finally {
            addBtn.disabled = false;
        }
    });

    // ---- a file
    const file = h('input', { type: 'file', id: 'suppression-file', name: 'file', accept: '.txt,.csv,text/plain,text/csv',
        'aria-describedby': 'suppression-file-hint' });
    const impErr = h('p', { class: 'error', role: 'alert', id: 'suppression-import-error' });
    const impDone = h('p', { class: 'notice', role: 'status', id: 'suppression-import-result' });
    const impBtn = h('button', { type: 'submit', id: 'suppression-import' }, 'Import the file');
    const impForm = h('form', { id: 'suppression-import-form', novalidate: true, 'aria-labelledby': 'suppression-import-title' },
        h('div', { class: 'field' }, h('label', { for: 'suppression-file' }, 'File to import'), file,
            h('p', { class: 'hint', id: 'suppression-file-hint' },
                `A text file with one address or @domain a line, or a CSV whose first column holds them; empty lines and ` +
                `lines starting with # are skipped, and a first line without @ (a header). At most ${IMPORT_MAX} entries. Either all of it is imported or nothing.`)),
        impErr, impDone, impBtn);
    impForm.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        impErr.textContent = '';
        impDone.textContent = '';
        notice.textContent = '';
        file.removeAttribute('aria-invalid');
        const bad = (words) => {
            impErr.textContent = words;
            file.setAttribute('aria-invalid', 'true');
            file.focus();
        };
        const f = file.files[0];
        if (!f)
            return bad('Choose a file to import.');
        if (f.size > FILE_MAX)
            return bad(`The file is larger than ${FILE_MAX / 1024 / 1024} MB: split it.`);
        let entries;
        try {
            entries = fileEntries(await f.text());
        } catch (e) {
            return bad(`The file could not be read: ${e.message}`);
        }
        if (!entries.length)
            return bad('The file holds no entry.');
        if (entries.length > IMPORT_MAX)
            return bad(`The file holds ${entries.length} entries; at most ${IMPORT_MAX} are imported at once: split it.`);
        impBtn.disabled = true;
        try {
            const r = await api('POST', '/v1/suppressions', { entries: entries.map((x) => x.entry) });
            impDone.dataset.added = String(r.added);
            impDone.dataset.existing = String(r.existing);
            impDone.textContent = `${f.name}: ${countWords(r)}`;
            impForm.reset();
            q = '';
            search.value = '';
            page = 1;
            await load();
        } catch (e) {
            impErr.dataset.code = e.code;
            bad(`The file was not imported: ${refusal(e, entries)}`);
        } finally {
            impBtn.disabled = false;
        }
    });

    await load();
    if (stale())
        return;
    clear(main,
        h('h1', {}, 'Suppressions'),
        h('p', {}, 'Addresses and whole domains you never want to mail. Previews count them, ',
            'and the results of jobs made afterwards mark them as suppressed.'),
        notice,
        h('div', { class: 'cards' },
            h('section', { class: 'card', 'aria-labelledby': 'suppression-add-title' },
                h('h2', { id: 'suppression-add-title' }, 'Add one'), addForm),
            h('section', { class: 'card', 'aria-labelledby': 'suppression-import-title' },
                h('h2', { id: 'suppression-import-title' }, 'Import a file'), impForm)),
        listTitle,
        searchForm, listErr, out,
        h('div', { class: 'actions' }, prev, where, next),
        del.dlg);
}
