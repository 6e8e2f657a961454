'use strict';
// errors.test.js: what a person reads when the service says no: 401, 402
// with the credits needed, 429 retried after Retry-After at most twice,
// an unreachable service; and the settings: the key checked with
// GET /v1/credits before it is kept (per user, never in the sheet), the
// service URL.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { World, account, key, credits, requests, api, plain, sb } = require('./harness.js');

// (a key the service does not know counts in the anonymous bucket of the
// address, 5 requests a window: the tests here stay under it)
test('401: every cell says the key was rejected', () => {
  const w = new World();
  w.setKey('alice', 'svc_live_' + 'x'.repeat(40));
  const out = plain(w.load('alice').SVC_VERIFY([[sb('who1')], [sb('who2')], [sb('who3')]]));
  assert.deepEqual(out, Array(3).fill(['SVC error: the API key was rejected (401). Use SVC > Set API key.']));
  assert.deepEqual(w.of('http').map((h) => h.status), [401, 401, 401]);
  assert.deepEqual(w.cache('alice').entries(), []);
});

test('an error that the next request would get too stops the requests after its group', () => {
  const acc = account('admin', 0);
  const w = new World();
  w.setKey('alice', key(acc));
  const cells = [];
  for (let i = 0; i < 15; i++)
    cells.push([sb('broke' + i)]);
  const out = plain(w.load('alice').SVC_VERIFY(cells));
  assert.deepEqual(out, Array(15).fill(['SVC error: not enough credits (402): 15 needed, 0 available.']));
  assert.deepEqual(w.of('fetchAll').map((f) => f.n), [10]);
  assert.deepEqual(requests(acc).map((r) => r.status), Array(10).fill(402));
});

test('402: the addresses that could be paid for are verified, the others say how many credits are needed', () => {
  const acc = account('admin', 3);
  const w = new World();
  w.setKey('alice', key(acc));
  const cells = [];
  for (let i = 0; i < 5; i++)
    cells.push([sb('poor' + i)]);
  const out = plain(w.load('alice').SVC_VERIFY(cells)).map((r) => r[0]);
  assert.equal(out.filter((s) => s === 'deliverable').length, 3);
  assert.deepEqual(out.filter((s) => s !== 'deliverable'),
    Array(2).fill('SVC error: not enough credits (402): 2 needed, 0 available.'));
  assert.deepEqual(requests(acc).map((r) => r.status).sort(), [200, 200, 200, 402, 402]);
  assert.equal(credits(acc).balance, 0);
});

test('429: the request is sent again after Retry-After and succeeds', () => {
  const acc = account('admin', 10);
  const k = key(acc, '--rate-limit', '1');	// one request a window (3 s here)
  const w = new World();
  w.setKey('alice', k);
  assert.equal(api('GET', '/v1/credits', k).status, 200);
  assert.equal(w.load('alice').SVC_VERIFY(sb('accepted_email')), 'deliverable');
  const statuses = w.of('http').map((h) => h.status);
  assert.deepEqual(statuses, [429, 200]);
  const [nap] = w.of('sleep');
  assert.ok(nap.ms >= 1000 && nap.ms <= 3000, 'slept Retry-After seconds: ' + nap.ms);
  assert.deepEqual(requests(acc).map((r) => r.method + ' ' + r.status), ['GET 200', 'POST 429', 'POST 200']);
});

test('429: after two retries the cell says the rate limit was reached', () => {
  const acc = account('admin', 10);
  const k = key(acc, '--rate-limit', '1');
  const w = new World();
  w.setKey('alice', k);
  w.sleep = 'virtual';		// the retries come before the window frees a place
  // and, however slow the machine, the key's one place is taken again
  // while the add-on waits (a request of another program of the customer),
  // so each retry finds the window full. One request is not enough: when it
  // comes while the window is still full it is refused and takes nothing,
  // and the window may free just before the retry. So ask until one is
  // answered 200 (the window freed and the place is taken again), then the
  // retry right after it finds the window full.
  w.onSleep = () => {
    const pause = new Int32Array(new SharedArrayBuffer(4));
    const end = Date.now() + 60000;
    while (Date.now() < end) {
      if (api('GET', '/v1/credits', k).status === 200)
        return;
      Atomics.wait(pause, 0, 0, 50);	// a synchronous 50 ms between tries
    }
    throw new Error('the key\'s window never freed a place in 60 s');
  };
  assert.equal(api('GET', '/v1/credits', k).status, 200);
  const out = w.load('alice').SVC_VERIFY(sb('accepted_email'));
  assert.match(out, /^SVC error: rate limit reached \(429\); try again in [1-3] s\.$/);
  assert.equal(w.of('sleep').length, 2);
  assert.ok(w.of('sleep').every((s) => s.ms >= 1000));
  assert.deepEqual(requests(acc).filter((r) => r.method === 'POST').map((r) => r.method + ' ' + r.status),
    ['POST 429', 'POST 429', 'POST 429']);
  assert.equal(requests(acc)[0].method + ' ' + requests(acc)[0].status, 'GET 200');
  assert.deepEqual(w.cache('alice').entries(), []);
  assert.equal(credits(acc).used, 0);
});

test('429 in a formula: a wait that would end after the time budget is not made', () => {
  const acc = account('admin', 10);
  const k = key(acc, '--rate-limit', '1');
  const w = new World();
  w.setKey('alice', k);
  assert.equal(api('GET', '/v1/credits', k).status, 200);
  const g = w.load('alice');
  g.SVC_FUNCTION_BUDGET_MS = 500;		// Retry-After is 1-3 s here
  assert.match(g.SVC_VERIFY(sb('accepted_email')), /^SVC error: rate limit reached \(429\)/);
  assert.equal(w.of('sleep').length, 0);
  assert.deepEqual(requests(acc).map((r) => r.method + ' ' + r.status), ['GET 200', 'POST 429']);
});

test('an unreachable service: the cell says so and names the address', () => {
  const w = new World();
  w.setKey('alice', 'svc_live_whatever');
  w.props('alice').map.set('SVC_BASE_URL', 'http://127.0.0.1:1');
  const out = plain(w.load('alice').SVC_VERIFY_DETAILS([[sb('a')], [sb('b')]]));
  assert.match(out[0][0], /^SVC error: cannot reach the service at http:\/\/127\.0\.0\.1:1 \(Address unavailable/);
  assert.deepEqual(out[1], out[0]);
  assert.deepEqual(w.cache('alice').entries(), []);
});

test('the menu command shows an error in a toast and leaves the rows it could not verify empty', () => {
  const w = new World();
  w.setKey('alice', 'svc_live_' + 'y'.repeat(40));
  const sheet = w.addSheet('Sheet1', [['Email'], [sb('accepted_email')], ['nope']]);
  w.select('Sheet1', 1, 1, 3, 1);
  w.load('alice').svcVerifySelectedColumn();
  assert.match(w.of('toast').pop().message, /^1 of 2 rows were not verified\. SVC error: the API key was rejected \(401\)/);
  assert.deepEqual(sheet.block(1, 2, 3, 3), [['SVC Status', 'SVC Sub-status', 'SVC Score'], ['', '', ''],
    ['invalid_input', '', '']]);
});

test('Set API key: a key the service rejects is not kept; a good one is checked with GET /v1/credits and kept for this user only, never in the sheet', () => {
  const acc = account('admin', 1234);
  const k = key(acc);
  const w = new World();
  const sheet = w.addSheet('Sheet1', [['Email'], [sb('accepted_email')]]);
  w.answers.push({ button: 'OK', text: '  svc_live_nonsense  ' });
  w.load('alice').svcSetApiKey();
  assert.match(w.of('alert').pop().text, /not saved\. The service rejected it \(401\)/);
  assert.equal(w.props('alice').map.get('SVC_API_KEY'), undefined);
  w.answers.push({ button: 'CANCEL', text: k });
  w.load('alice').svcSetApiKey();
  assert.equal(w.props('alice').map.get('SVC_API_KEY'), undefined);
  w.answers.push({ button: 'OK', text: ' ' + k + '\n' });
  w.load('alice').svcSetApiKey();
  assert.equal(w.of('alert').pop().text, 'The key was saved. Balance: 1234 credits.');
  assert.equal(w.props('alice').map.get('SVC_API_KEY'), k);
  assert.deepEqual(requests(acc).map((r) => r.method + ' ' + r.path + ' ' + r.status), ['GET /v1/credits 200']);
  // bob has none; the key is in no cell and in no shared property
  assert.equal(w.props('bob').map.get('SVC_API_KEY'), undefined);
  assert.ok(!JSON.stringify(sheet.cells).includes(k));
  assert.ok(!JSON.stringify([...w.docProps.map, ...w.scriptProps.map]).includes(k));
  // and it is the one used
  w.select('Sheet1', 1, 1, 2, 1);
  w.load('alice').svcVerifySelectedColumn();
  assert.equal(sheet.get(2, 2), 'deliverable');
  assert.ok(!JSON.stringify(sheet.cells).includes(k));
  assert.equal(credits(acc).used, 1);
});

test('Set service URL keeps an http(s) address for this user only (with their key), and refuses anything else', () => {
  const w = new World();
  const before = w.props('alice').map.get('SVC_BASE_URL');
  w.answers.push({ button: 'OK', text: 'ftp://verify.example.com' });
  w.load('alice').svcSetServiceUrl();
  assert.match(w.of('alert').pop().text, /not an http\(s\) address/);
  assert.equal(w.props('alice').map.get('SVC_BASE_URL'), before);
  w.answers.push({ button: 'OK', text: ' https://verify.example.com/ ' });
  w.load('alice').svcSetServiceUrl();
  assert.equal(w.props('alice').map.get('SVC_BASE_URL'), 'https://verify.example.com');
  assert.equal(w.load('alice').svcBaseUrl_(), 'https://verify.example.com');
  // nobody else's requests go there
  assert.equal(w.load('bob').svcBaseUrl_(), before);
  assert.equal(w.scriptProps.map.size + w.docProps.map.size, 0);
  w.props('carol').map.delete('SVC_BASE_URL');		// a user who never set it
  assert.equal(w.load('carol').svcBaseUrl_(), 'https://api.example.com');
});
