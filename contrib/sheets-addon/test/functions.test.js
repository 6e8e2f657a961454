'use strict';
// functions.test.js: SVC_VERIFY and SVC_VERIFY_DETAILS against the real
// svc-api: statuses per cell, blank and non-address cells, the 100-address
// limit, one request per address in groups of ten, the details columns
// (did_you_mean from a real typo), each user's own key, the time budget.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { World, account, key, credits, requests, verifyPosts, api, plain, sb } = require('./harness.js');

function setup(credit = 1000, ...keyOpts) {
  const acc = account('admin', credit);
  const k = key(acc, ...keyOpts);
  const w = new World();
  w.setKey('alice', k);
  return { acc, k, w, g: w.load('alice') };
}

test('SVC_VERIFY gives each address its status; blank cells stay blank; a non-address is invalid_input without a request', () => {
  const { acc, w, g } = setup();
  const out = plain(g.SVC_VERIFY([[sb('accepted_email'), sb('rejected_email')], [sb('role_based'), sb('unknown')],
    ['', 'not an email'], ['  ' + sb('mailbox_full') + '  ', 42]]));
  assert.deepEqual(out, [['deliverable', 'undeliverable'], ['risky', 'unknown'], ['', 'invalid_input'],
    ['risky', 'invalid_input']]);
  // the server saw the five addresses, trimmed, and charged them; nothing else
  assert.deepEqual(requests(acc).map((r) => r.path + ' ' + r.status), Array(5).fill('/v1/verify 200'));
  assert.equal(requests(acc).length, 5);
  assert.equal(credits(acc).used, 5);
  const sent = w.of('http').map((h) => h.payload.email).sort();
  assert.deepEqual(sent, [sb('accepted_email'), sb('mailbox_full'), sb('rejected_email'), sb('role_based'),
    sb('unknown')].sort());
});

test('SVC_VERIFY of a single cell returns a single value; a blank cell returns an empty value', () => {
  const { acc, g } = setup();
  assert.equal(g.SVC_VERIFY(sb('accepted_email')), 'deliverable');
  assert.equal(g.SVC_VERIFY(''), '');
  assert.equal(g.SVC_VERIFY('someone at example dot com'), 'invalid_input');
  assert.equal(verifyPosts(acc), 1);
});

test('an address that appears several times in a range is verified once', () => {
  const { acc, g } = setup();
  const a = sb('accepted_email');
  const out = plain(g.SVC_VERIFY([[a], [a.toUpperCase()], [' ' + a]]));
  assert.deepEqual(out, [['deliverable'], ['deliverable'], ['deliverable']]);
  assert.equal(verifyPosts(acc), 1);
});

test('at most 100 addresses a call: 100 (and blank cells besides) are verified, 101 are refused without a request', () => {
  const acc = account('admin', 0);
  const w = new World();
  w.setKey('alice', key(acc, '--sandbox'));	// sandbox addresses are free for a sandbox key
  const g = w.load('alice');
  const hundred = [];
  for (let i = 0; i < 100; i++)
    hundred.push([sb('user' + i)]);
  const out = plain(g.SVC_VERIFY(hundred.concat([[''], ['']])));
  assert.equal(out.length, 102);
  assert.ok(out.slice(0, 100).every((r) => r[0] === 'deliverable'));
  assert.equal(verifyPosts(acc), 100);
  const before = w.of('http').length;
  assert.throws(() => g.SVC_VERIFY(hundred.concat([[sb('one-more')]])), /at most 100 addresses/);
  assert.throws(() => g.SVC_VERIFY_DETAILS(hundred.concat([[sb('one-more')]])), /at most 100 addresses/);
  assert.equal(w.of('http').length, before);
  assert.equal(verifyPosts(acc), 100);
});

test('the requests go out ten at a time (UrlFetchApp.fetchAll)', () => {
  const { acc, w, g } = setup();
  const cells = [];
  for (let i = 0; i < 25; i++)
    cells.push([sb('parallel' + i)]);
  const out = plain(g.SVC_VERIFY(cells));
  assert.ok(out.every((r) => r[0] === 'deliverable'));
  assert.deepEqual(w.of('fetchAll').map((f) => f.n), [10, 10, 5]);
  assert.equal(verifyPosts(acc), 25);
});

test('SVC_VERIFY_DETAILS gives status, sub_status, score and did_you_mean per address', () => {
  const { acc, g } = setup();
  const out = plain(g.SVC_VERIFY_DETAILS([[sb('catch_all')], [''], ['x@mailbx.svc.test'], ['not an email'],
    [sb('rejected_email')]]));
  // what the API itself says of the same addresses (another account)
  const other = key(account('admin', 100));
  const want = (email) => {
    const r = api('POST', '/v1/verify', other, { email }).body;
    return [r.status, r.sub_status || '', r.score, r.did_you_mean || ''];
  };
  assert.deepEqual(out, [want(sb('catch_all')), ['', '', '', ''], want('x@mailbx.svc.test'),
    ['invalid_input', '', '', ''], want(sb('rejected_email'))]);
  assert.deepEqual(out[2], ['undeliverable', 'possible_typo', out[2][2], 'x@mailbox.svc.test']);
  assert.equal(out[0][1], 'catch_all');
  assert.ok(out.every((r) => r[2] === '' || (r[2] >= 0 && r[2] <= 100)));
  assert.equal(verifyPosts(acc), 3);
});

test('SVC_VERIFY_DETAILS takes a single column', () => {
  const { w, g } = setup();
  assert.throws(() => g.SVC_VERIFY_DETAILS([[sb('a'), sb('b')]]), /single column/);
  assert.equal(w.of('http').length, 0);
  assert.deepEqual(plain(g.SVC_VERIFY_DETAILS(sb('accepted_email'))), [['deliverable', '', 95, '']]);
});

test('formulas are charged to the key of the user who calculates them; a user without a key is told so', () => {
  const accA = account('admin', 100), accB = account('admin', 100);
  const w = new World();
  w.setKey('alice', key(accA));
  w.setKey('bob', key(accB));
  const range = [[sb('accepted_email')], [sb('role_based')]];
  assert.deepEqual(plain(w.load('alice').SVC_VERIFY(range)), [['deliverable'], ['risky']]);
  assert.deepEqual(plain(w.load('bob').SVC_VERIFY(range)), [['deliverable'], ['risky']]);
  assert.equal(credits(accA).used, 2);
  assert.equal(credits(accB).used, 2);
  const before = w.of('http').length;
  const out = plain(w.load('carol').SVC_VERIFY(range));
  assert.match(out[0][0], /^SVC error: no API key\. Use SVC > Set API key\.$/);
  assert.equal(out[1][0], out[0][0]);
  assert.equal(w.of('http').length, before);
});

test('no group of requests starts after the time budget; the rest are told to recalculate and come from the cache next time', () => {
  const { acc, g } = setup();
  const cells = [];
  for (let i = 0; i < 25; i++)
    cells.push([sb('budget' + i)]);
  g.SVC_FUNCTION_BUDGET_MS = 0;		// spent as soon as the first group is out
  const first = plain(g.SVC_VERIFY(cells));
  assert.equal(first.filter((r) => r[0] === 'deliverable').length, 10);
  assert.equal(first.filter((r) => /time limit reached; recalculate/.test(r[0])).length, 15);
  assert.equal(verifyPosts(acc), 10);
  g.SVC_FUNCTION_BUDGET_MS = 25000;
  const second = plain(g.SVC_VERIFY(cells));
  assert.ok(second.every((r) => r[0] === 'deliverable'));
  assert.equal(verifyPosts(acc), 25);
});
