// signin.js: the sign-in form (e-mail and password, POST /v1/session). The
// API's refusals are said in words next to the form: a wrong password or
// unknown e-mail (401), too many failed attempts (429, with the wait).
import { api } from './api.js';
import { h, clear, waitWords } from './dom.js';

export function signinMessage(e) {
    switch (e.code) {
    case 'invalid_credentials':
        return 'The e-mail address or the password is not right. Check both and try again.';
    case 'too_many_signin_attempts': {
        const s = e.retryAfter ?? (e.details && e.details.retry_after);
        return 'Too many failed sign-in attempts. ' +
            (s ? `Wait ${waitWords(s)} before you try again.` : 'Wait a while before you try again.');
    }
    case 'network':
        return e.message;
    default:
        return `Signing in failed: ${e.message}`;
    }
}

export function render(main, { notice, signedIn }) {
    const err = h('p', { id: 'signin-error', class: 'error', role: 'alert', 'aria-live': 'assertive' });
    const email = h('input', { id: 'signin-email', name: 'email', type: 'email', required: true,
        autocomplete: 'username', 'aria-describedby': 'signin-error' });
    const password = h('input', { id: 'signin-password', name: 'password', type: 'password',
        required: true, autocomplete: 'current-password', 'aria-describedby': 'signin-error' });
    const button = h('button', { type: 'submit', id: 'signin-submit' }, 'Sign in');
    const form = h('form', { id: 'signin-form', novalidate: true },
        h('div', { class: 'field' }, h('label', { for: 'signin-email' }, 'E-mail address'), email),
        h('div', { class: 'field' }, h('label', { for: 'signin-password' }, 'Password'), password),
        err,
        button);
    form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        err.textContent = '';
        delete err.dataset.code;
        for (const i of [email, password])
            i.removeAttribute('aria-invalid');
        if (!email.value.trim() || !password.value) {
            err.textContent = 'Enter your e-mail address and your password.';
            (email.value.trim() ? password : email).setAttribute('aria-invalid', 'true');
            (email.value.trim() ? password : email).focus();
            return;
        }
        button.disabled = true;
        try {
            const s = await api('POST', '/v1/session', { email: email.value.trim(), password: password.value });
            password.value = '';
            signedIn(s);
        } catch (e) {
            err.dataset.code = e.code;
            err.textContent = signinMessage(e);
            if (e.code === 'invalid_credentials') {
                email.setAttribute('aria-invalid', 'true');
                password.setAttribute('aria-invalid', 'true');
            }
            password.value = '';
            password.focus();
        } finally {
            button.disabled = false;
        }
    });
    clear(main,
        h('section', { class: 'signin card', 'aria-labelledby': 'signin-title' },
            h('h1', { id: 'signin-title' }, 'Sign in to the dashboard'),
            notice ? h('p', { class: 'notice', role: 'status', id: 'signin-notice' }, notice) : null,
            form,
            h('p', { class: 'hint' },
                'Your operator sets your password or sends you an invitation link.')));
}
