// app.js: the dashboard's entry point. Finds out whether the browser has a
// session (GET /v1/session), then draws the view the address's #fragment
// names: #signin, #overview, #keys, #verify, #upload, #preview/JOB, #jobs,
// #job/JOB, #webhooks, #webhook/WEBHOOK (its delivery log), #suppressions,
// #accuracy (and /app/invite#TOKEN, an invitation link, the page that sets
// the password). A view that is ready sets
// main's data-page and aria-busy="false" (what the browser test waits for).
import { api, setCsrfToken, onSessionEnded } from './api.js';
import { h, clear, timeZone } from './dom.js';
import * as signin from './signin.js';
import * as overview from './overview.js';
import * as keys from './keys.js';
import * as verify from './verify.js';
import * as invite from './invite.js';
import * as upload from './upload.js';
import * as jobs from './jobs.js';
import * as webhooks from './webhooks.js';
import * as suppressions from './suppressions.js';
import * as accuracy from './accuracy.js';

const views = {
    overview: { title: 'Overview', mod: overview },
    keys: { title: 'API keys', mod: keys },
    verify: { title: 'Verify an address', mod: verify },
    upload: { title: 'Upload a list', mod: upload },
    jobs: { title: 'Jobs', mod: jobs },
    webhooks: { title: 'Webhooks', mod: webhooks },
    suppressions: { title: 'Suppressions', mod: suppressions },
    accuracy: { title: 'Accuracy', mod: accuracy },
    // (pages of one job or webhook: #NAME/ID)
    preview: { title: 'List Health Preview', mod: { render: upload.renderPreview }, param: true, nav: 'upload' },
    job: { title: 'Job', mod: { render: jobs.renderJob }, param: true, nav: 'jobs' },
    webhook: { title: 'Delivery log', mod: { render: webhooks.renderLog }, param: true, nav: 'webhooks' },
};

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const account = document.getElementById('account');
let session = null;     // the answer of GET or POST /v1/session
let drawing = 0;        // the latest draw; an older one that finishes late is dropped

// route(): [NAME, PARAM] of the address's #fragment (PARAM: a job's or webhook's id)
function route() {
    const r = location.hash.replace(/^#\/?/, '');
    const m = /^([a-z]+)\/([A-Za-z0-9_-]{1,64})$/.exec(r);
    if (m && Object.prototype.hasOwnProperty.call(views, m[1]) && views[m[1]].param)
        return [m[1], m[2]];
    return Object.prototype.hasOwnProperty.call(views, r) && !views[r].param ? [r, null] : ['overview', null];
}

function showSignedIn(yes) {
    nav.hidden = !yes;
    account.hidden = !yes;
    document.getElementById('who').textContent = yes ? `Signed in as ${session.email}` : '';
}

// draw([NOTICE]): the view for the address, or the sign-in form without a session
async function draw(notice) {
    const n = ++drawing;
    main.setAttribute('aria-busy', 'true');
    main.removeAttribute('data-page');
    if (!session) {
        showSignedIn(false);
        document.title = 'Sign in — svc dashboard';
        signin.render(main, { notice, signedIn });
        main.dataset.page = 'signin';
        main.setAttribute('aria-busy', 'false');
        return;
    }
    showSignedIn(true);
    const [name, param] = route();
    const v = views[name];
    for (const a of nav.querySelectorAll('a'))
        if (a.getAttribute('href') === '#' + (v.nav || name))
            a.setAttribute('aria-current', 'page');
        else
            a.removeAttribute('aria-current');
    document.title = `${v.title} — svc dashboard`;
    clear(main, h('h1', {}, v.title), h('p', { class: 'loading' }, 'Loading…'));
    try {
        await v.mod.render(main, { session, param, stale: () => n !== drawing });
    } catch (e) {
        if (n !== drawing)
            return;
        clear(main, h('h1', {}, v.title),
            h('p', { class: 'error', role: 'alert' }, `This page could not be loaded: ${e.message}`));
    }
    if (n !== drawing)
        return;
    main.dataset.page = name;
    main.setAttribute('aria-busy', 'false');
}

// signedIn(SESSION): after a successful sign-in
function signedIn(s) {
    session = s;
    setCsrfToken(s.csrf_token);
    if (route()[0] === 'overview' && location.hash !== '#overview')
        history.replaceState(null, '', '#overview');
    draw().then(() => main.focus());
}

function ended(notice) {
    session = null;
    setCsrfToken(null);
    draw(notice).then(() => main.focus());
}

onSessionEnded(() => ended('Your session has ended. Please sign in again.'));

document.getElementById('signout').addEventListener('click', async (ev) => {
    const b = ev.currentTarget;
    b.disabled = true;
    try {
        await api('DELETE', '/v1/session');
        ended('You have signed out.');
    } catch (e) {
        if (e.status === 401)
            ended('You have signed out.');
        else
            clear(main, h('h1', {}, 'Sign out'),
                h('p', { class: 'error', role: 'alert' }, `Signing out failed: ${e.message}`));
    } finally {
        b.disabled = false;
    }
});

const onInvitePage = () => /\/invite$/.test(location.pathname);

// the page of an invitation link (/app/invite#TOKEN): no session needed
function showInvite() {
    const token = location.hash.slice(1);
    if (token)
        history.replaceState(null, '', location.pathname);
    document.title = 'Choose your password — svc dashboard';
    invite.render(main, token);
    main.dataset.page = 'invite';
    main.setAttribute('aria-busy', 'false');
}

window.addEventListener('hashchange', () => {
    if (onInvitePage())
        showInvite();
    else
        draw().then(() => main.focus());
});

async function start() {
    document.getElementById('tz').textContent = timeZone;
    if (onInvitePage()) {
        showInvite();
        return;
    }
    try {
        session = await api('GET', '/v1/session', undefined, { quietUnauthorized: true });
        setCsrfToken(session.csrf_token);
    } catch (e) {
        session = null;
        // (429: the anonymous window of the address, shared behind a NAT,
        // is full; a browser without a session is the likely one, and
        // signing in is not counted there)
        if (e.status !== 401 && e.status !== 429) {
            await draw(`The service could not tell whether you are signed in: ${e.message}`);
            return;
        }
    }
    await draw();
}

start();
