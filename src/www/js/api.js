// api.js: the dashboard's one way to the JSON API on the same origin. The
// session cookie (HttpOnly: never seen here) goes with every request; the
// session's CSRF token, kept in memory only, goes with every request that
// changes something. No API key is ever kept by the browser.
let csrfToken = null;

export function setCsrfToken(t) { csrfToken = t; }

// ApiError: a refused request, with what the page needs to say why in words
export class ApiError extends Error {
    constructor(status, code, message, details, retryAfter) {
        super(message);
        this.status = status;      // HTTP status, 0 when nothing answered
        this.code = code;          // the API's error.code
        this.details = details;    // the API's error.details (or null)
        this.retryAfter = retryAfter; // seconds (Retry-After), or null
    }
}

// onSessionEnded: called when a request made with the session is refused
// as unauthorized (the session ended elsewhere: idle, signed out)
let sessionEnded = () => {};
export function onSessionEnded(f) { sessionEnded = f; }

// api(METHOD, PATH[, BODY]): the parsed JSON answer, or throws ApiError
// (a FormData BODY is sent as multipart/form-data, as the browser makes it)
export async function api(method, path, body, opts = {}) {
    const headers = { Accept: 'application/json' };
    const form = typeof FormData !== 'undefined' && body instanceof FormData;
    if (body !== undefined && !form)
        headers['Content-Type'] = 'application/json';
    if (method !== 'GET' && method !== 'HEAD' && csrfToken)
        headers['X-CSRF-Token'] = csrfToken;
    let res;
    try {
        res = await fetch(path, {
            method, headers, credentials: 'same-origin', cache: 'no-store',
            body: body === undefined ? undefined : form ? body : JSON.stringify(body),
        });
    } catch (e) {
        throw new ApiError(0, 'network', 'The service could not be reached. Check the connection and try again.', null, null);
    }
    let data = null;
    const text = await res.text();
    if (text) {
        try { data = JSON.parse(text); } catch (e) { data = null; }
    }
    if (!res.ok) {
        const err = data && typeof data.error === 'object' ? data.error : null;
        const ra = res.headers.get('Retry-After');
        const e = new ApiError(res.status, err ? err.code : 'http_' + res.status,
            err && err.message ? err.message : `The service answered ${res.status}.`,
            err ? err.details : null, ra !== null && /^\d+$/.test(ra) ? Number(ra) : null);
        if (res.status === 401 && e.code === 'unauthorized' && !opts.quietUnauthorized)
            sessionEnded(e);
        throw e;
    }
    if (opts.withStatus)
        return { status: res.status, data };
    return data;
}
