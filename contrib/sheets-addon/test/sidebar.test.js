'use strict';
// sidebar.test.js: Sidebar.html's script, run in node:vm with a fake page
// (the elements it touches), a fake google.script.run and a fake timer:
// it polls svcJobPoll every 5 seconds while the job runs or its results
// are written, shows the percentage as a bar, stops when the job is over,
// keeps trying after a failed poll, and Cancel calls svcJobCancel.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const { ADDON } = require('./harness.js');

function page() {
  const html = fs.readFileSync(path.join(ADDON, 'Sidebar.html'), 'utf8');
  const script = /<script>([\s\S]*)<\/script>/.exec(html)[1];
  const el = {};
  for (const id of ['bar', 'pct', 'msg', 'cancel'])
    assert.match(html, new RegExp('id="' + id + '"'), 'the page has #' + id);
  ['bar', 'pct', 'msg', 'cancel'].forEach((id) => (el[id] = { style: {}, textContent: '', disabled: true }));
  const p = { el, calls: [], timers: [], cleared: [], ids: 0 };
  // google.script.run: each call waits for the test to answer it
  const runner = () => {
    const call = {};
    const r = {
      withSuccessHandler: (f) => ((call.ok = f), r),
      withFailureHandler: (f) => ((call.fail = f), r),
      svcJobPoll: () => p.calls.push(Object.assign(call, { fn: 'svcJobPoll' })),
      svcJobCancel: () => p.calls.push(Object.assign(call, { fn: 'svcJobCancel' })),
    };
    return r;
  };
  p.ctx = vm.createContext({
    document: { getElementById: (id) => el[id] },
    google: { script: { get run() { return runner(); } } },
    setTimeout: (fn, ms) => {
      p.timers.push({ id: ++p.ids, fn, ms });
      return p.ids;
    },
    clearTimeout: (id) => {
      p.cleared.push(id);
      p.timers = p.timers.filter((t) => t.id !== id);
    },
  });
  vm.runInContext(script, p.ctx);
  // fire the next timer, if any: what 5 seconds later brings
  p.tick = () => {
    const t = p.timers.shift();
    assert.ok(t, 'a poll is scheduled');
    t.fn();
  };
  return p;
}

test('the sidebar polls at once, then every 5 seconds while the job runs, with the progress as a bar', () => {
  const p = page();
  assert.deepEqual(p.calls.map((c) => c.fn), ['svcJobPoll']);
  p.calls[0].ok({ state: 'running', percent: 40, message: 'Verifying: 24 of 60 (40%)' });
  assert.equal(p.el.bar.style.width, '40%');
  assert.equal(p.el.pct.textContent, '40%');
  assert.equal(p.el.msg.textContent, 'Verifying: 24 of 60 (40%)');
  assert.equal(p.el.cancel.disabled, false);
  assert.deepEqual(p.timers.map((t) => t.ms), [5000]);
  p.tick();
  assert.equal(p.calls.length, 2);
  p.calls[1].ok({ state: 'writing', percent: 100, message: 'Writing results: 1000 of 1200' });
  assert.equal(p.el.cancel.disabled, true);
  assert.deepEqual(p.timers.map((t) => t.ms), [5000]);
  p.tick();
  p.calls[2].ok({ state: 'done', percent: 100, message: 'Done: 1200 results written.' });
  assert.equal(p.el.bar.style.width, '100%');
  assert.equal(p.timers.length, 0, 'no poll after the job is over');
});

test('a failed poll is tried again 5 seconds later; a job gone or failed ends the polling', () => {
  const p = page();
  p.calls[0].fail(new Error('Service unavailable'));
  assert.match(p.el.msg.textContent, /Service unavailable/);
  assert.deepEqual(p.timers.map((t) => t.ms), [5000]);
  p.tick();
  p.calls[1].ok({ state: 'failed', message: 'The bulk job failed: no_emails' });
  assert.equal(p.timers.length, 0);
  assert.equal(p.el.msg.textContent, 'The bulk job failed: no_emails');
});

test('Cancel stops the scheduled poll and calls svcJobCancel', () => {
  const p = page();
  p.calls[0].ok({ state: 'running', percent: 10, message: 'Verifying' });
  assert.equal(p.timers.length, 1);
  p.ctx.cancelJob();
  assert.deepEqual(p.cleared, [1]);
  assert.equal(p.timers.length, 0);
  assert.equal(p.el.cancel.disabled, true);
  assert.deepEqual(p.calls.map((c) => c.fn), ['svcJobPoll', 'svcJobCancel']);
  p.calls[1].ok({ state: 'cancelled', message: 'The bulk job was cancelled; 61 credits were refunded.' });
  assert.equal(p.el.msg.textContent, 'The bulk job was cancelled; 61 credits were refunded.');
  assert.equal(p.timers.length, 0, 'no poll after the job was cancelled');
});
