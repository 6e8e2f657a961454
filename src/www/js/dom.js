// dom.js: small helpers to build the pages with DOM calls (text is never
// parsed as HTML), to show times in the user's time zone and to mark the
// form field an API error names.

// h(TAG, ATTRS, ...CHILDREN): an element; ATTRS' on* functions become
// listeners, true/false attributes are set or left out, strings and
// numbers among CHILDREN become text
export function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
        if (v === undefined || v === null || v === false)
            continue;
        if (k.startsWith('on') && typeof v === 'function')
            el.addEventListener(k.slice(2), v);
        else if (k === 'class')
            el.className = v;
        else if (k === 'text')
            el.textContent = v;
        else
            el.setAttribute(k, v === true ? '' : String(v));
    }
    append(el, children);
    return el;
}

function append(el, children) {
    for (const c of children) {
        if (c === undefined || c === null || c === false)
            continue;
        if (Array.isArray(c))
            append(el, c);
        else if (c instanceof Node)
            el.appendChild(c);
        else
            el.appendChild(document.createTextNode(String(c)));
    }
}

// the user's time zone, as the browser knows it
export const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

const dateTime = new Intl.DateTimeFormat(undefined, {
    year: 'numeric', month: 'short', day: 'numeric',
    hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short',
});

// when(DATE): a <time> in the user's zone, its datetime attribute in UTC;
// DATE is an ISO string, Unix seconds or a Date; '—' for null
export function when(d) {
    if (d === null || d === undefined || d === '')
        return h('span', {}, '—');
    const date = typeof d === 'number' ? new Date(d * 1000) : new Date(d);
    if (Number.isNaN(date.getTime()))
        return h('span', {}, String(d));
    return h('time', { datetime: date.toISOString() }, dateTime.format(date));
}

// plural(N, ONE, MANY): "1 second", "3 seconds"
export function plural(n, one, many) {
    return `${n} ${n === 1 ? one : many}`;
}

// waitWords(SECONDS): "45 seconds", "3 minutes", "2 hours"
export function waitWords(s) {
    if (s < 90)
        return plural(s, 'second', 'seconds');
    if (s < 90 * 60)
        return plural(Math.ceil(s / 60), 'minute', 'minutes');
    return plural(Math.ceil(s / 3600), 'hour', 'hours');
}

// markRefused(FIELDS, ERR): the form field the API's refusal ERR names
// (its details.field, a key of FIELDS) marked invalid and focused; none
// when it names no field of FIELDS
export function markRefused(fields, e) {
    const f = e.details && fields[e.details.field];
    if (f) {
        f.setAttribute('aria-invalid', 'true');
        f.focus();
    }
}

// clear(EL, ...CHILDREN): replace EL's content
export function clear(el, ...children) {
    el.replaceChildren();
    append(el, children);
    return el;
}

let nextId = 0;
// uid(PREFIX): an id unique on the page, for label/aria links
// A page whose object the API does not know for this account (404).
export function notFound(main, title, what) {
    clear(main, h('h1', {}, title),
        h('p', { class: 'error', role: 'alert', id: 'not-found' }, `Not found: there is no such ${what} on this account.`));
}

export function uid(p) { nextId += 1; return `${p}-${nextId}`; }
