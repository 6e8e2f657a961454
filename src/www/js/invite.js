// invite.js: the page of an invitation link (svcadm account invite prints
// <base_url>/app/invite#<token>): the user chooses a password, sent with the
// token to POST /v1/session/invite, then signs in. The token is taken out of
// the address as soon as it is read, so it stays in no history.
import { api } from './api.js';
import { h, clear } from './dom.js';

const MIN = 12;

export function render(main, token) {
    const err = h('p', { id: 'invite-error', class: 'error', role: 'alert' });
    const pw = h('input', { id: 'invite-password', type: 'password', required: true, minlength: MIN,
        autocomplete: 'new-password', 'aria-describedby': 'invite-hint invite-error' });
    const again = h('input', { id: 'invite-confirm', type: 'password', required: true,
        autocomplete: 'new-password', 'aria-describedby': 'invite-error' });
    const button = h('button', { type: 'submit', id: 'invite-submit' }, 'Set the password');
    const form = h('form', { id: 'invite-form', novalidate: true },
        h('div', { class: 'field' }, h('label', { for: 'invite-password' }, 'New password'), pw,
            h('p', { class: 'hint', id: 'invite-hint' }, `At least ${MIN} characters.`)),
        h('div', { class: 'field' }, h('label', { for: 'invite-confirm' }, 'The same password again'), again),
        err, button);
    const done = () => clear(main, h('section', { class: 'signin card', 'aria-labelledby': 'invite-title' },
        h('h1', { id: 'invite-title', tabindex: '-1' }, 'Your password is set'),
        h('p', { class: 'notice', role: 'status', id: 'invite-done' }, 'You can sign in with your e-mail address and the new password now.'),
        h('p', {}, h('a', { href: './', id: 'invite-signin' }, 'Go to the sign-in page'))));
    form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        err.textContent = '';
        pw.removeAttribute('aria-invalid');
        again.removeAttribute('aria-invalid');
        if (pw.value.length < MIN) {
            err.textContent = `The password needs at least ${MIN} characters.`;
            pw.setAttribute('aria-invalid', 'true');
            pw.focus();
            return;
        }
        if (pw.value !== again.value) {
            err.textContent = 'The two passwords are not the same.';
            again.setAttribute('aria-invalid', 'true');
            again.focus();
            return;
        }
        button.disabled = true;
        try {
            await api('POST', '/v1/session/invite', { token, password: pw.value });
            done();
            main.querySelector('h1').focus();
        } catch (e) {
            err.dataset.code = e.code;
            err.textContent = e.code === 'invalid_invitation'
                ? 'This invitation link is unknown, already used or expired. Ask your operator for a new one.'
                : e.code === 'too_many_signin_attempts'
                    ? 'Too many failed attempts from here. Wait a while before you try again.'
                    : `The password was not set: ${e.message}`;
        } finally {
            button.disabled = false;
        }
    });
    clear(main, h('section', { class: 'signin card', 'aria-labelledby': 'invite-title' },
        h('h1', { id: 'invite-title' }, 'Choose your password'),
        token ? form : h('p', { class: 'error', role: 'alert', id: 'invite-error' },
            'This link has no invitation in it. Open the whole link you were given.')));
}
