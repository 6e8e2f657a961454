// usage.js: the overview's chart of credits used and refunded per UTC day
// (GET /v1/credits?days=30's "daily"), drawn as SVG by the script (no
// library), with the same numbers as a table for screen readers and for
// anyone who wants the figures. Each bar carries its day and value in
// data-* attributes (what the browser test reads against the API's).
import { h } from './dom.js';

const SVG = 'http://www.w3.org/2000/svg';
// the drawing's own units (the SVG scales to the card's width)
const W = 640, H = 220, LEFT = 52, RIGHT = 24, TOP = 12, BOTTOM = 34;
const PLOT_W = W - LEFT - RIGHT, PLOT_H = H - TOP - BOTTOM;

function s(tag, attrs, ...children) {
    const el = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {}))
        if (v !== undefined && v !== null)
            el.setAttribute(k, String(v));
    for (const c of children)
        if (c !== null && c !== undefined)
            el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
    return el;
}

// niceMax(V): the axis' top, a round number at or above V (at least 1)
export function niceMax(v) {
    if (v <= 1)
        return 1;
    const p = 10 ** Math.floor(Math.log10(v));
    for (const m of [1, 2, 2.5, 5, 10])
        if (m * p >= v)
            return m * p;
    return 10 * p;
}

// "Nov 3": a UTC day's label (the days are UTC days, whatever the zone)
const dayLabel = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
const dayLong = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'long', day: 'numeric', timeZone: 'UTC' });
const utc = (date) => new Date(`${date}T00:00:00Z`);

// usageChart(DAILY): a <figure> with the SVG bars and the table of DAILY
// ([{date, used, refunded}], oldest first)
export function usageChart(daily) {
    const used = daily.reduce((a, d) => a + d.used, 0);
    const refunded = daily.reduce((a, d) => a + d.refunded, 0);
    const top = niceMax(Math.max(0, ...daily.map((d) => Math.max(d.used, d.refunded))));
    const slot = PLOT_W / daily.length;
    const barW = Math.max(1, slot * 0.38);
    const y = (v) => TOP + PLOT_H - (PLOT_H * v) / top;
    const busiest = daily.reduce((b, d) => (d.used > b.used ? d : b), daily[0]);
    const summary = `${used} credits used and ${refunded} refunded over the ${daily.length} days from ` +
        `${dayLong.format(utc(daily[0].date))} to ${dayLong.format(utc(daily[daily.length - 1].date))} (UTC days)` +
        (busiest && busiest.used > 0 ? `; the most used on ${dayLong.format(utc(busiest.date))}: ${busiest.used}.` : '.');

    const grid = s('g', { class: 'grid' });
    // (credits are whole: no line at half of an odd top)
    for (const v of Number.isInteger(top / 2) ? [0, top / 2, top] : [0, top]) {
        grid.appendChild(s('line', { x1: LEFT, x2: W - RIGHT, y1: y(v), y2: y(v) }));
        grid.appendChild(s('text', { x: LEFT - 6, y: y(v) + 4, 'text-anchor': 'end' }, v));
    }
    const bars = s('g', { class: 'bars' });
    const ticks = s('g', { class: 'ticks' });
    daily.forEach((d, i) => {
        const x = LEFT + i * slot + (slot - 2 * barW) / 2;
        for (const [k, v, dx] of [['used', d.used, 0], ['refunded', d.refunded, barW]])
            bars.appendChild(s('rect', { class: `bar-${k}`, x: x + dx, y: y(v), width: barW, height: y(0) - y(v),
                'data-date': d.date, 'data-kind': k, 'data-value': v }));
        // a label every 7 days, counted back from today's
        if ((daily.length - 1 - i) % 7 === 0)
            ticks.appendChild(s('text', { x: LEFT + i * slot + slot / 2, y: H - BOTTOM + 16, 'text-anchor': 'middle' },
                dayLabel.format(utc(d.date))));
    });
    const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': 'usage-title usage-desc',
        id: 'usage-svg', 'data-top': top, 'data-plot-height': PLOT_H, focusable: 'false' },
    s('title', { id: 'usage-title' }, `Credits used and refunded per day, last ${daily.length} days`),
    s('desc', { id: 'usage-desc' }, summary), grid, bars, ticks,
    s('line', { class: 'axis', x1: LEFT, x2: W - RIGHT, y1: y(0), y2: y(0) }));

    const table = h('table', { id: 'usage-table', class: 'compact' },
        h('caption', {}, 'Credits per UTC day'),
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Day (UTC)'), h('th', { scope: 'col' }, 'Used'),
            h('th', { scope: 'col' }, 'Refunded'))),
        h('tbody', {}, daily.slice().reverse().map((d) => h('tr', { 'data-date': d.date },
            h('th', { scope: 'row' }, h('time', { datetime: d.date }, dayLong.format(utc(d.date)))),
            h('td', { 'data-value': d.used }, d.used), h('td', { 'data-value': d.refunded }, d.refunded)))));
    return h('figure', { class: 'usage', id: 'usage-chart', 'data-used': used, 'data-refunded': refunded },
        svg,
        h('figcaption', {},
            h('ul', { class: 'legend' },
                h('li', {}, h('span', { class: 'swatch key-used', 'aria-hidden': 'true' }), 'Used'),
                h('li', {}, h('span', { class: 'swatch key-refunded', 'aria-hidden': 'true' }), 'Refunded')),
            h('p', { class: 'hint', id: 'usage-summary' }, summary)),
        h('details', {}, h('summary', {}, 'The numbers, day by day'), h('div', { class: 'scroll' }, table)));
}
