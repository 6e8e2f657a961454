'use strict';
// bulk.test.js: "Verify selected column" over more than 50 addresses: one
// POST /v1/verify/bulk with an Idempotency-Key, the job remembered in the
// document properties (a reload loses nothing), progress polled by the
// sidebar, results read 1,000 at a time, matched to rows by address,
// written and cached; Cancel; a lost answer; 402; another user's key.
// svc-worker --once runs the jobs when a test says so.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { World, account, key, credits, requests, api, runWorker, sql, plain, sb } = require('./harness.js');

// a sheet with a header and n sandbox addresses in column A
function sheetRows(n, prefix) {
  const rows = [['Email']];
  for (let i = 0; i < n; i++)
    rows.push([sb(prefix + i)]);
  return rows;
}

function setup(rows, { credit = 1000, sandbox = false } = {}) {
  const acc = account('admin', credit);
  const k = sandbox ? key(acc, '--sandbox') : key(acc);
  const w = new World();
  w.setKey('alice', k);
  const sheet = w.addSheet('Sheet1', rows);
  w.select('Sheet1', 1, 1, rows.length, 1);
  return { acc, k, w, sheet, g: w.load('alice') };
}

function pending(w) {
  const v = w.docProps.map.get('SVC_PENDING_JOB');
  return v === undefined ? null : JSON.parse(v);
}

function bulkPosts(w) {
  return w.of('http').filter((h) => h.method === 'POST' && /\/v1\/verify\/bulk$/.test(h.url));
}

test('more than 50 addresses: one bulk job with an Idempotency-Key; when it completes every row gets its result, matched by address, and the results are cached', () => {
  const rows = sheetRows(58, 'bulk');
  // duplicates in other spellings, a non-address, a blank row, two risky ones
  rows.push([sb('BULK3').toUpperCase()], ['not an email'], [''], [sb('role_based')], [sb('mailbox_full')],
    [' ' + sb('bulk7') + ' '], ['Mixed.Case@Sandbox.SVC.example'], ['mixed.case@sandbox.svc.example']);
  // and two addresses whose results are cached already
  rows.push([sb('rejected_email')], [sb('unknown')]);
  const { acc, k, w, sheet, g } = setup(rows);
  assert.deepEqual(plain(g.SVC_VERIFY([[sb('rejected_email')], [sb('unknown')]])), [['undeliverable'], ['unknown']]);
  w.log.length = 0;
  const last = rows.length;
  g.svcVerifySelectedColumn();

  const posts = bulkPosts(w);
  assert.equal(posts.length, 1);
  assert.match(posts[0].headers['Idempotency-Key'], /^[0-9a-f-]{36}$/);
  // the cached addresses and the non-address are not sent; each address once
  assert.equal(posts[0].payload.emails.length, 61);
  assert.ok(posts[0].payload.emails.includes('Mixed.Case@Sandbox.SVC.example'));
  assert.ok(!posts[0].payload.emails.includes(sb('rejected_email')));
  assert.ok(!posts[0].payload.emails.includes('not an email'));
  assert.equal(w.of('http').filter((h) => /\/v1\/verify$/.test(h.url)).length, 0);
  assert.equal(credits(acc).used, 2 + 61);
  // cached results and invalid_input are written at once
  assert.deepEqual(sheet.block(1, 2, 1, 3), [['SVC Status', 'SVC Sub-status', 'SVC Score']]);
  assert.equal(sheet.get(last - 1, 2), 'undeliverable');
  assert.equal(sheet.get(last, 2), 'unknown');
  assert.equal(sheet.get(61, 2), 'invalid_input');
  assert.equal(sheet.get(2, 2), '');
  // the job is remembered per spreadsheet, and the sidebar follows it
  const p = pending(w);
  assert.equal(p.state, 'running');
  assert.match(p.jobId, /^job_/);
  assert.equal(w.of('sidebar').length, 1);
  assert.match(w.of('sidebar')[0].content, /svcJobPoll/);

  // before the worker ran: still running, nothing more written
  const r1 = plain(g.svcJobPoll());
  assert.equal(r1.state, 'running');
  assert.match(r1.message, /Verifying: 0 of 61/);
  assert.equal(sheet.get(2, 2), '');

  assert.equal(runWorker(p.jobId, k), 'completed');
  const r2 = plain(w.load('alice').svcJobPoll());
  assert.equal(r2.state, 'done');
  assert.equal(pending(w), null);
  // the server saw one job creation, the polls and one page of results; no single verification
  // (runWorker's own GET /v1/jobs/ID left out)
  const server = requests(acc).map((r) => r.method + ' ' + r.path.replace(/job_\w+/, 'ID'))
      .filter((r) => r !== 'GET /v1/jobs/ID');
  assert.deepEqual(server, ['POST /v1/verify', 'POST /v1/verify', 'POST /v1/verify/bulk',
    'GET /v1/jobs/ID/progress', 'GET /v1/jobs/ID/progress', 'GET /v1/jobs/ID/results']);
  assert.match(w.of('http').pop().url, /\/results\?limit=1000&page=1$/);
  // every row has the result of its address
  const results = api('GET', '/v1/jobs/' + p.jobId + '/results?limit=1000', k).body.results;
  const byEmail = {};
  results.forEach((r) => (byEmail[r.email.toLowerCase()] = r));
  for (let i = 2; i <= last; i++) {
    const a = String(sheet.get(i, 1)).trim().toLowerCase();
    const got = sheet.block(i, 2, 1, 3)[0];
    if (a === '')
      assert.deepEqual(got, ['', '', '']);
    else if (a === 'not an email')
      assert.deepEqual(got, ['invalid_input', '', '']);
    else if (byEmail[a])
      assert.deepEqual(got, [byEmail[a].status, byEmail[a].sub_status || '', byEmail[a].score], 'row ' + i);
  }
  assert.deepEqual(sheet.block(2, 2, 1, 3), [['deliverable', '', byEmail[sb('bulk0')].score]]);
  assert.equal(sheet.get(59, 2), 'deliverable');		// BULK3 in capitals
  assert.deepEqual(sheet.block(62 + 1, 2, 2, 2), [['risky', 'role_based'], ['risky', 'mailbox_full']]);
  assert.equal(sheet.get(65, 2), 'deliverable');		// " bulk7 "
  // the job has the first spelling; both rows get its result
  assert.deepEqual(sheet.column(2, 66, 67), ['deliverable', 'deliverable']);
  assert.match(w.of('toast').pop().message, /complete: 61 results written/);
  // the bulk results went into the cache: a formula costs nothing now
  const before = requests(acc).length;
  assert.equal(w.load('alice').SVC_VERIFY(sb('mailbox_full')), 'risky');
  assert.equal(w.load('alice').SVC_VERIFY(sb('bulk42')), 'deliverable');
  assert.equal(requests(acc).length, before);
});

test('results are read 1,000 at a time, and the writing goes on across polls', () => {
  const { k, w, sheet, g } = setup(sheetRows(1200, 'many'), { credit: 0, sandbox: true });
  g.svcVerifySelectedColumn();
  const p = pending(w);
  assert.equal(p.total, 1200);
  assert.equal(runWorker(p.jobId, k), 'completed');
  const g2 = w.load('alice');
  g2.SVC_PAGES_PER_POLL = 1;
  const r1 = plain(g2.svcJobPoll());
  assert.equal(r1.state, 'writing');
  assert.match(r1.message, /Writing results: 1000 of 1200/);
  assert.equal(pending(w).page, 2);
  assert.equal(sheet.column(2, 2, 1201).filter((s) => s === 'deliverable').length, 1000);
  const r2 = plain(w.load('alice').svcJobPoll());
  assert.equal(r2.state, 'done');
  assert.equal(sheet.column(2, 2, 1201).filter((s) => s === 'deliverable').length, 1200);
  const pages = w.of('http').filter((h) => /\/results\?/.test(h.url)).map((h) => h.url.replace(/.*\?/, ''));
  assert.deepEqual(pages, ['limit=1000&page=1', 'limit=1000&page=2']);
});

test('the pending job survives a reload: the new session reminds of it and writes the results', () => {
  const { k, w, sheet, g } = setup(sheetRows(61, 'reload'), { sandbox: true });
  g.svcVerifySelectedColumn();
  const { jobId } = pending(w);
  assert.ok(jobId);
  // the spreadsheet is closed and opened again: a new execution, nothing but the properties kept
  const g2 = w.load('alice');
  g2.onOpen({ authMode: 'LIMITED' });
  assert.deepEqual(w.of('menu').pop().items.map((i) => i.caption), ['Verify selected column',
    'Show bulk job progress', 'Cancel bulk job', 'Set API key', 'Set service URL']);
  assert.match(w.of('toast').pop().message, /still open: SVC > Show bulk job progress/);
  g2.svcShowProgress();
  assert.equal(w.of('sidebar').length, 2);
  assert.equal(runWorker(jobId, k), 'completed');
  assert.equal(plain(g2.svcJobPoll()).state, 'done');
  assert.ok(sheet.column(2, 2, 62).every((s) => s === 'deliverable'));
  assert.equal(pending(w), null);
  // and the next opening has nothing to remind of
  const toasts = w.of('toast').length;
  w.load('alice').onOpen({});
  assert.equal(w.of('toast').length, toasts);
});

test('Cancel calls DELETE /v1/jobs/{id}: the job is cancelled, the credits refunded, the job forgotten', () => {
  const { acc, k, w, g } = setup(sheetRows(61, 'cancel'));
  g.svcVerifySelectedColumn();
  const { jobId } = pending(w);
  assert.equal(credits(acc).used, 61);
  g.svcCancelJob();
  assert.match(w.of('toast').pop().message, /cancelled; 61 credits were refunded/);
  assert.deepEqual(requests(acc).filter((r) => r.method === 'DELETE').map((r) => [r.path, r.status]),
    [['/v1/jobs/' + jobId, 200]]);
  assert.equal(api('GET', '/v1/jobs/' + jobId, k).body.status, 'cancelled');
  assert.equal(credits(acc).balance, 1000);
  assert.equal(pending(w), null);
  assert.equal(plain(g.svcJobPoll()).state, 'none');
  // a new command is allowed again
  assert.match(plain(g.svcJobCancel()).message, /No bulk job is running/);
});

test('a job cancelled elsewhere, or failed, or gone is forgotten at the next poll, with a message', () => {
  const { k, w, g } = setup(sheetRows(52, 'ended'), { sandbox: true });
  g.svcVerifySelectedColumn();
  const first = pending(w).jobId;
  assert.equal(api('DELETE', '/v1/jobs/' + first, k).status, 200);
  assert.deepEqual(plain(g.svcJobPoll()), { state: 'cancelled', message: 'The bulk job was cancelled.' });
  assert.equal(pending(w), null);
  w.answers.push('YES');			// the titles are there
  g.svcVerifySelectedColumn();
  const second = pending(w).jobId;
  assert.notEqual(second, first);
  sql("UPDATE jobs SET status = 'failed', error_code = 'file_unavailable', error_message = " +
      "'the stored addresses could not be read' WHERE id = '" + second + "'");
  assert.deepEqual(plain(g.svcJobPoll()), { state: 'failed',
    message: 'The bulk job failed: the stored addresses could not be read' });
  assert.equal(pending(w), null);
  w.answers.push('YES');
  g.svcVerifySelectedColumn();
  const third = pending(w).jobId;
  sql("DELETE FROM job_emails WHERE job_id = '" + third + "'");
  sql("DELETE FROM jobs WHERE id = '" + third + "'");
  assert.deepEqual(plain(g.svcJobPoll()), { state: 'gone', message: 'The bulk job no longer exists.' });
  assert.equal(pending(w), null);
});

test('a job that finished in the meantime cannot be cancelled: its results are still written', () => {
  const { k, w, sheet, g } = setup(sheetRows(55, 'late'), { sandbox: true });
  g.svcVerifySelectedColumn();
  const { jobId } = pending(w);
  assert.equal(runWorker(jobId, k), 'completed');
  const r = plain(g.svcJobCancel());
  assert.equal(r.state, 'running');
  assert.match(r.message, /can no longer be cancelled/);
  assert.equal(plain(g.svcJobPoll()).state, 'done');
  assert.ok(sheet.column(2, 2, 56).every((s) => s === 'deliverable'));
});

test('a lost answer to the job creation: running the command again sends the same Idempotency-Key and gets the same job, charged once', () => {
  const { acc, k, w, g } = setup(sheetRows(61, 'lost'));
  w.loseAnswers = 1;
  g.svcVerifySelectedColumn();
  assert.match(w.of('toast').pop().message, /cannot reach the service.*Timeout/);
  const p1 = pending(w);
  assert.equal(p1.state, 'creating');
  assert.match(plain(g.svcJobPoll()).message, /was not created\. Run Verify selected column again/);
  assert.equal(credits(acc).used, 61);		// the server did create it
  w.answers.push('YES');			// the titles are there already
  w.load('alice').svcVerifySelectedColumn();
  const posts = bulkPosts(w);
  assert.equal(posts.length, 2);
  assert.equal(posts[1].headers['Idempotency-Key'], posts[0].headers['Idempotency-Key']);
  const p2 = pending(w);
  assert.equal(p2.state, 'running');
  const jobs = api('GET', '/v1/jobs', k).body;
  assert.equal(jobs.total, 1);
  assert.equal(jobs.data[0].job_id, p2.jobId);
  assert.equal(credits(acc).used, 61);
  assert.deepEqual(requests(acc).filter((r) => r.path === '/v1/verify/bulk').map((r) => r.status), [202, 202]);
});

test('no second bulk job starts while another execution holds the spreadsheet\'s lock', () => {
  const { acc, w, g } = setup(sheetRows(51, 'locked'), { sandbox: true });
  w.lockHeld = true;
  g.svcVerifySelectedColumn();
  assert.match(w.of('toast').pop().message, /Another bulk job is being started/);
  assert.equal(w.of('http').length, 0);
  assert.equal(pending(w), null);
  assert.equal(requests(acc).length, 0);
});

test('402 on the job creation says how many credits are needed; nothing is remembered', () => {
  // (51 addresses: the fewest that make a bulk job)
  const { acc, w, g } = setup(sheetRows(51, 'poor'), { credit: 10 });
  g.svcVerifySelectedColumn();
  assert.deepEqual(bulkPosts(w).map((h) => h.payload.emails.length), [51]);
  assert.match(w.of('toast').pop().message, /^SVC error: not enough credits \(402\): 51 needed, 10 available\.$/);
  assert.equal(pending(w), null);
  assert.equal(w.of('sidebar').length, 0);
  assert.equal(credits(acc).balance, 10);
  assert.deepEqual(requests(acc).map((r) => r.status), [402]);
});

test('while a job runs, another user with another key can neither follow nor cancel it, nor start another', () => {
  const { acc, w, g } = setup(sheetRows(61, 'owner'));
  g.svcVerifySelectedColumn();
  const accB = account('admin', 100);
  w.setKey('bob', key(accB));
  const gb = w.load('bob');
  const n = w.of('http').length;
  assert.equal(plain(gb.svcJobPoll()).state, 'other');
  assert.equal(plain(gb.svcJobCancel()).state, 'other');
  gb.svcVerifySelectedColumn();
  assert.match(w.of('alert').pop().text, /still running/);
  assert.equal(w.of('http').length, n);
  assert.equal(requests(accB).length, 0);
  assert.equal(pending(w).state, 'running');
  // the owner still can
  w.lockHeld = true;		// ...but not while another execution holds the spreadsheet's lock
  assert.equal(plain(w.load('alice').svcJobPoll()).state, 'busy');
  assert.equal(w.of('http').length, n);
  w.lockHeld = false;
  assert.equal(plain(w.load('alice').svcJobCancel()).state, 'cancelled');
  assert.equal(requests(acc).filter((r) => r.method === 'DELETE').length, 1);
});
