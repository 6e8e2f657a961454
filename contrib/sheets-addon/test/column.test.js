'use strict';
// column.test.js: the menu command "Verify selected column" with 50
// addresses or fewer: the three columns to the right, the header rule,
// the selection trimmed to its last row with data, trimmed cells, the
// overwrite prompt, cached results written before any request, the rest
// through POST /v1/verify ten at a time; what it refuses.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { World, account, key, requests, verifyPosts, plain, sb } = require('./harness.js');

const TITLES = ['SVC Status', 'SVC Sub-status', 'SVC Score'];

function setup(rows, opts) {
  const acc = account('admin', 1000);
  const w = new World();
  w.setKey('alice', key(acc));
  const sheet = w.addSheet('Sheet1', rows, opts);
  return { acc, w, sheet, g: w.load('alice') };
}

// the row of a result as the command writes it
function row(status, sub = '', score) {
  return [status, sub, score];
}

test('a first cell that is not an email is the header: the titles go in its row, the results below; the selection is trimmed to its last row with data', () => {
  const { acc, w, sheet, g } = setup([['Email'], [sb('accepted_email')], ['  ' + sb('rejected_email') + '  '],
    ['not an email'], [''], [sb('role_based')]]);
  w.select('Sheet1', 1, 1, 1000, 1);		// the whole column A
  g.svcVerifySelectedColumn();
  const got = sheet.block(1, 2, 7, 3);
  assert.deepEqual(got[0], TITLES);
  assert.deepEqual(got[1], row('deliverable', '', got[1][2]));
  assert.deepEqual(got[2], row('undeliverable', 'mailbox_not_found', got[2][2]));
  assert.deepEqual(got[3], row('invalid_input', '', ''));
  assert.deepEqual(got[4], ['', '', '']);
  assert.deepEqual(got[5], row('risky', 'role_based', got[5][2]));
  assert.ok([1, 2, 5].every((i) => typeof got[i][2] === 'number' && got[i][2] >= 0 && got[i][2] <= 100));
  assert.deepEqual(got[6], ['', '', '']);
  // nothing written below the last address, no prompt (the targets were empty)
  assert.equal(sheet.lastRow(), 6);
  assert.ok(w.of('write').every((e) => /^B1:D6$/.test(e.a1)), JSON.stringify(w.of('write').map((e) => e.a1)));
  assert.equal(w.of('alert').length, 0);
  // the header and the non-address made no request; the cell was trimmed
  assert.equal(verifyPosts(acc), 3);
  assert.ok(w.of('http').some((h) => h.payload.email === sb('rejected_email')));
  assert.match(w.of('toast').pop().message, /Verified 5 rows/);
});

test('the selection ends at the last address of its own column, however long the other columns are', () => {
  const rows = [];
  for (let i = 1; i <= 12; i++)
    rows.push([i, i <= 4 ? sb('short' + i) : '']);
  const { acc, w, sheet, g } = setup(rows);
  w.select('Sheet1', 1, 2, 1000, 1);		// the whole column B
  g.svcVerifySelectedColumn();
  assert.deepEqual(sheet.column(3, 1, 12), ['deliverable', 'deliverable', 'deliverable', 'deliverable',
    '', '', '', '', '', '', '', '']);
  assert.deepEqual(w.of('write').map((e) => e.a1), ['C1:E4', 'C1:E4', 'C1:E4']);
  assert.equal(verifyPosts(acc), 4);
});

test('without a header the results start at the first selected row and no titles are written', () => {
  const { w, sheet, g } = setup([[sb('accepted_email')], [sb('mailbox_full')]]);
  w.select('Sheet1', 1, 1, 2, 1);
  g.svcVerifySelectedColumn();
  assert.deepEqual(sheet.column(2, 1, 2), ['deliverable', 'risky']);
  assert.deepEqual(sheet.column(3, 1, 2), ['', 'mailbox_full']);
});

test('a header just above a selection of addresses gets the titles', () => {
  const { w, sheet, g } = setup([['E-mail address'], [sb('accepted_email')], [sb('disposable_email')]]);
  w.select('Sheet1', 2, 1, 2, 1);
  g.svcVerifySelectedColumn();
  assert.deepEqual(sheet.block(1, 2, 3, 2), [TITLES.slice(0, 2), ['deliverable', ''],
    ['undeliverable', 'disposable']]);
});

test('a single selected cell stands for its whole column', () => {
  const { w, sheet, g } = setup([['Email', ''], [sb('accepted_email')], [sb('rejected_email')]]);
  w.select('Sheet1', 3, 1);
  g.svcVerifySelectedColumn();
  assert.deepEqual(sheet.column(2, 1, 3), ['SVC Status', 'deliverable', 'undeliverable']);
});

test('non-empty target cells are overwritten only when the person says yes', () => {
  const { acc, w, sheet, g } = setup([['Email'], [sb('accepted_email')], [sb('rejected_email')]]);
  sheet.set(3, 3, 'old note');
  w.select('Sheet1', 1, 1, 3, 1);
  w.answers.push('NO');
  g.svcVerifySelectedColumn();
  const [ask] = w.of('alert');
  assert.equal(ask.buttons, 'YES_NO');
  assert.match(ask.text, /B1:D3 are not empty\. Overwrite/);
  assert.deepEqual(sheet.block(1, 2, 3, 3), [['', '', ''], ['', '', ''], ['', 'old note', '']]);
  assert.equal(w.of('write').length, 0);
  assert.equal(w.of('http').length, 0);
  assert.equal(verifyPosts(acc), 0);
  assert.match(w.of('toast').pop().message, /Nothing was changed/);
  w.answers.push('YES');
  w.load('alice').svcVerifySelectedColumn();
  assert.deepEqual(sheet.column(2, 1, 3), ['SVC Status', 'deliverable', 'undeliverable']);
  assert.equal(sheet.get(3, 3), 'mailbox_not_found');
  assert.equal(verifyPosts(acc), 2);
});

test('cached results are written at once, before any request; the rest go to POST /v1/verify', () => {
  const { acc, w, sheet, g } = setup([['Email'], [sb('accepted_email')], [sb('catch_all')], [sb('role_based')],
    [sb('rejected_email')], [sb('spam_trap')]]);
  // two of them were calculated by a formula before
  assert.deepEqual(plain(g.SVC_VERIFY([[sb('catch_all')], [sb('rejected_email')]])), [['unknown'], ['undeliverable']]);
  assert.equal(verifyPosts(acc), 2);
  w.log.length = 0;
  w.select('Sheet1', 1, 1, 6, 1);
  w.load('alice').svcVerifySelectedColumn();
  const firstHttp = w.log.findIndex((e) => e.kind === 'http');
  const firstWrite = w.log.findIndex((e) => e.kind === 'write');
  assert.ok(firstWrite >= 0 && firstWrite < firstHttp, 'the cached results were written before any request');
  assert.ok(w.log.slice(firstWrite, firstHttp).some((e) => e.kind === 'flush'), 'and flushed');
  const early = w.log[firstWrite].values.map((r) => r[0]);
  assert.deepEqual(early, ['SVC Status', '', 'unknown', '', 'undeliverable', '']);
  assert.deepEqual(sheet.column(2, 2, 6), ['deliverable', 'unknown', 'risky', 'undeliverable', 'risky']);
  assert.deepEqual(w.of('http').map((h) => h.payload.email).sort(),
    [sb('accepted_email'), sb('role_based'), sb('spam_trap')].sort());
  assert.equal(verifyPosts(acc), 5);
});

test('up to 50 addresses go to POST /v1/verify ten in parallel, each group written as it comes', () => {
  const rows = [['Email']];
  for (let i = 0; i < 50; i++)
    rows.push([sb('row' + i)]);
  const { acc, w, sheet, g } = setup(rows);
  w.select('Sheet1', 1, 1, 51, 1);
  g.svcVerifySelectedColumn();
  assert.deepEqual(w.of('fetchAll').map((f) => f.n), [10, 10, 10, 10, 10]);
  assert.equal(verifyPosts(acc), 50);
  assert.equal(requests(acc).filter((r) => r.path === '/v1/verify/bulk').length, 0);
  assert.ok(sheet.column(2, 2, 51).every((s) => s === 'deliverable'));
  // the first write, one after each group, the last
  assert.equal(w.of('write').length, 7);
  const afterFirstGroup = w.of('write')[1].values.slice(1).filter((r) => r[0] === 'deliverable').length;
  assert.equal(afterFirstGroup, 10);
});

test('the command needs one column and a key, and adds columns when the sheet has too few', () => {
  const { acc, w, sheet, g } = setup([['Email', 'x'], [sb('accepted_email'), 'y']], { maxCols: 2 });
  w.select('Sheet1', 1, 1, 2, 2);
  g.svcVerifySelectedColumn();
  assert.match(w.of('alert').pop().text, /Select the one column/);
  const w2 = new World();
  w2.addSheet('Sheet1', [[sb('accepted_email')]]);
  w2.select('Sheet1', 1, 1);
  w2.load('carol').svcVerifySelectedColumn();
  assert.match(w2.of('alert').pop().text, /no API key/);
  assert.equal(w2.of('http').length + w2.of('write').length, 0);
  // column B of a two-column sheet: C, D and E are added
  w.select('Sheet1', 1, 2, 2, 1);
  sheet.set(1, 2, 'Email');
  sheet.set(2, 2, sb('rejected_email'));
  g.svcVerifySelectedColumn();
  assert.deepEqual(w.of('insertColumns').map((e) => [e.after, e.n]), [[2, 3]]);
  assert.deepEqual(sheet.block(1, 3, 2, 2), [['SVC Status', 'SVC Sub-status'], ['undeliverable', 'mailbox_not_found']]);
  assert.equal(verifyPosts(acc), 1);
});
