// overview.js: the account at a glance: the credit balance (GET
// /v1/credits) and the current rate-limit window (GET /rate-limit).
import { api } from './api.js';
import { h, clear, when } from './dom.js';

function figure(id, label, value, ...more) {
    return h('section', { class: 'card', 'aria-labelledby': id + '-label' },
        h('h2', { id: id + '-label' }, label),
        h('p', { class: 'figure', id, 'data-value': String(value) }, String(value)),
        ...more);
}

export async function render(main, { session, stale }) {
    const [credits, rl] = await Promise.all([api('GET', '/v1/credits'), api('GET', '/rate-limit')]);
    if (stale())
        return;
    const org = credits.organization;
    clear(main,
        h('h1', {}, 'Overview'),
        h('p', {}, `Account ${session.account_id} (${session.email}), tier ${rl.tier}.`),
        h('div', { class: 'cards' },
            figure('balance', 'Credit balance', credits.balance,
                h('p', { class: 'hint' }, `${credits.used} used, ${credits.refunded} refunded.`),
                org ? h('p', { class: 'hint' }, `Organization ${org.id}: ${org.balance} credits.`) : null),
            figure('rl-remaining', 'Requests left this minute', rl.remaining,
                h('p', { class: 'hint' },
                    `${rl.used} of ${rl.limit} used in the current window, which resets at `,
                    h('span', { id: 'rl-reset' }, when(rl.reset_at)), '.'))));
}
