// overview.js: the account at a glance: the credit balance and the usage
// of the last 30 UTC days as a chart (GET /v1/credits?days=30) and the
// current rate-limit window (GET /rate-limit).
import { api } from './api.js';
import { h, clear, when } from './dom.js';
import { usageChart } from './usage.js';

const USAGE_DAYS = 30;

function figure(id, label, value, ...more) {
    return h('section', { class: 'card', 'aria-labelledby': id + '-label' },
        h('h2', { id: id + '-label' }, label),
        h('p', { class: 'figure', id, 'data-value': String(value) }, String(value)),
        ...more);
}

export async function render(main, { session, stale }) {
    const [credits, rl] = await Promise.all([api('GET', `/v1/credits?days=${USAGE_DAYS}`), api('GET', '/rate-limit')]);
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
                    h('span', { id: 'rl-reset' }, when(rl.reset_at)), '.'))),
        h('section', { class: 'card', 'aria-labelledby': 'usage-label' },
            h('h2', { id: 'usage-label' }, `Usage, last ${USAGE_DAYS} days`),
            usageChart(credits.daily)));
}
