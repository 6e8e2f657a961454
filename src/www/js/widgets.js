// widgets.js: two parts the keys, webhooks and suppressions pages share: a
// secret shown once with a copy button (kept nowhere), and a confirmation
// dialog whose action's refusal is said in words inside the dialog.
import { h, clear } from './dom.js';

// secretCard(BOX, {id, title, warning, label, value, more, after}): draws
// in BOX a card with the secret VALUE (input #ID), a Copy button (#ID-copy)
// and "Done" (#ID-done: empties BOX, then AFTER()); focuses its title, and
// returns it
export function secretCard(box, { id, title, warning, label, value, more, after }) {
    const out = h('input', { type: 'text', readonly: true, id, value,
        'aria-describedby': `${id}-warning`, spellcheck: 'false', autocomplete: 'off' });
    const copied = h('p', { role: 'status', id: `${id}-copied`, class: 'hint' });
    const copy = h('button', { type: 'button', id: `${id}-copy` }, 'Copy');
    copy.addEventListener('click', async () => {
        try {
            await navigator.clipboard.writeText(out.value);
            copied.textContent = 'Copied to the clipboard.';
        } catch (e) {
            out.focus();
            out.select();
            copied.textContent = 'Copying is not allowed here: the secret is selected, press Ctrl+C (or ⌘C).';
        }
    });
    const done = h('button', { type: 'button', class: 'secondary', id: `${id}-done` }, 'Done, I have kept it');
    const heading = h('h2', { id: `${id}-title`, tabindex: '-1' }, title);
    done.addEventListener('click', () => {
        clear(box);
        if (after)
            after();
    });
    clear(box, h('section', { class: 'card secret', 'aria-labelledby': `${id}-title` },
        heading,
        h('p', { id: `${id}-warning` }, warning),
        h('div', { class: 'secret-row' }, h('label', { for: id }, label), out, copy),
        copied, more || null, h('div', { class: 'actions' }, done)));
    heading.focus();
    return heading;
}

// confirmDialog(ID, OK_LABEL): {dlg, ask(TITLE, TEXT, ACTION)}: ask opens
// the modal dialog #ID (Cancel focused first); OK runs ACTION(), which
// closes it when it resolves (the focus then goes to the element it
// resolves to: the button that opened the dialog may be gone), or says in
// the dialog (#ID-error) why it was refused when it throws (its message)
export function confirmDialog(id, okLabel) {
    const title = h('h2', { id: `${id}-title` });
    const text = h('p', { id: `${id}-text` });
    const err = h('p', { class: 'error', role: 'alert', id: `${id}-error` });
    const cancel = h('button', { type: 'button', class: 'secondary', id: `${id}-cancel`, autofocus: true }, 'Cancel');
    const ok = h('button', { type: 'button', class: 'danger', id: `${id}-confirm` }, okLabel);
    const dlg = h('dialog', { id, 'aria-labelledby': `${id}-title`, 'aria-describedby': `${id}-text` },
        title, text, err, h('div', { class: 'actions' }, cancel, ok));
    let action = null;
    cancel.addEventListener('click', () => dlg.close());
    ok.addEventListener('click', async () => {
        ok.disabled = true;
        err.textContent = '';
        try {
            const next = await action();
            dlg.close();
            if (next && next.isConnected)
                next.focus();
        } catch (e) {
            err.textContent = e.message;
        } finally {
            ok.disabled = false;
        }
    });
    return {
        dlg,
        ask(t, words, act) {
            title.textContent = t;
            text.textContent = words;
            err.textContent = '';
            action = act;
            dlg.showModal();
        },
    };
}
