'use strict';
// functions.test.js: SVC_VERIFY and SVC_VERIFY_DETAILS against the real
// svc-api: statuses per cell, blank and non-address cells, the 100-address
// limit, one request per address in groups of ten, the details columns
// (did_you_mean from a real typo), whose key a formula may spend (Google
// runs it with the owner's user properties: an editor's formula spends no
// key, and nor does one whose calculator Google does not name), the time
// budget.
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

const REFUSED = /^SVC error: a formula may only spend the key of the person calculating it, and Google does not say who that is here\. Use SVC > Verify selected column\.$/;

test('the owner\'s own formulas are charged to the owner\'s key; a user without a key is told so', () => {
  const accA = account('admin', 100);
  const w = new World();
  w.setKey('alice', key(accA));
  const range = [[sb('accepted_email')], [sb('role_based')]];
  assert.deepEqual(plain(w.load('alice').SVC_VERIFY(range)), [['deliverable'], ['risky']]);
  assert.equal(credits(accA).used, 2);
  const w2 = new World();
  w2.owner = 'carol';
  const out = plain(w2.load('carol').SVC_VERIFY(range));
  assert.match(out[0][0], /^SVC error: no API key\. Use SVC > Set API key\.$/);
  assert.equal(out[1][0], out[0][0]);
  assert.equal(w2.of('http').length, 0);
});

test('an editor\'s formula in the owner\'s sheet spends neither the owner\'s key (Google hands it the owner\'s properties) nor the editor\'s; the menu command charges the editor', () => {
  const accA = account('admin', 100), accB = account('admin', 100);
  const w = new World();		// alice owns the spreadsheet, bob edits it
  w.setKey('alice', key(accA));
  w.setKey('bob', key(accB));
  const range = [[sb('accepted_email')], [''], ['not an email'], [sb('role_based')]];
  const out = plain(w.load('bob').SVC_VERIFY(range));
  assert.match(out[0][0], REFUSED);
  assert.deepEqual(out.slice(1, 3), [[''], ['invalid_input']]);
  assert.match(out[3][0], REFUSED);
  const details = plain(w.load('bob').SVC_VERIFY_DETAILS([[sb('accepted_email')]]));
  assert.match(details[0][0], REFUSED);
  assert.equal(w.of('http').length, 0);
  assert.equal(requests(accA).length, 0);
  assert.equal(credits(accA).used, 0);
  assert.equal(credits(accB).used, 0);
  // what the owner paid for does not show in the editor's formulas either
  assert.equal(w.load('alice').SVC_VERIFY(sb('role_based')), 'risky');
  assert.match(w.load('bob').SVC_VERIFY(sb('role_based')), REFUSED);
  assert.equal(credits(accA).used, 1);
  // where Google names the editor (one Workspace domain), the key there is still not theirs
  w.formulaSeesAll = true;
  assert.match(w.load('bob').SVC_VERIFY(sb('accepted_email')), REFUSED);
  assert.equal(w.load('alice').SVC_VERIFY(sb('accepted_email')), 'deliverable');
  assert.equal(credits(accA).used, 2);
  // Verify selected column runs as bob: bob's key
  const sheet = w.addSheet('Sheet1', [['Email'], [sb('accepted_email')]]);
  w.select('Sheet1', 1, 1, 2, 1);
  w.load('bob').svcVerifySelectedColumn();
  assert.equal(sheet.block(2, 2, 1, 1)[0][0], 'deliverable');
  assert.equal(credits(accB).used, 1);
  assert.equal(credits(accA).used, 2);
});

test('the owner\'s formulas spend nothing when Google does not name the person calculating (a published add-on), or when the key was saved without its saver', () => {
  const accA = account('admin', 100);
  const w = new World();
  w.setKey('alice', key(accA));
  w.formulaSeesOwner = false;
  assert.match(w.load('alice').SVC_VERIFY(sb('accepted_email')), REFUSED);
  w.formulaSeesOwner = true;
  w.props('alice').map.delete('SVC_API_KEY_USER');	// a key saved by an older add-on
  assert.match(w.load('alice').SVC_VERIFY(sb('accepted_email')), REFUSED);
  assert.equal(w.of('http').length, 0);
  assert.equal(credits(accA).used, 0);
});

test('Set API key keeps who saved the key; a key saved where Google gives no email is not spent by formulas', () => {
  const acc = account('admin', 100);
  const k = key(acc);
  const w = new World();
  w.answers.push({ button: 'OK', text: k });
  w.load('alice').svcSetApiKey();
  assert.equal(w.props('alice').map.get('SVC_API_KEY_USER'), w.email('alice'));
  assert.equal(w.load('alice').SVC_VERIFY(sb('accepted_email')), 'deliverable');
  const g = w.load('alice');
  g.Session = { getActiveUser: () => ({ getEmail: () => '' }) };
  w.answers.push({ button: 'OK', text: k });
  g.svcSetApiKey();
  assert.match(w.of('alert').pop().text, /formulas will not spend this key/);
  assert.equal(w.props('alice').map.get('SVC_API_KEY_USER'), undefined);
  assert.match(w.load('alice').SVC_VERIFY(sb('role_based')), REFUSED);
  assert.equal(credits(acc).used, 1);
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
