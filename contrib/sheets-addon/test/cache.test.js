'use strict';
// cache.test.js: the per-user cache of results: 6 hours for a result,
// 15 minutes for an unknown one, errors never; each user's own. The fake
// CacheService's clock is moved by the test (world.advance), and the
// server's request log and ledger say which evaluations made a request.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { World, account, key, credits, requests, verifyPosts, svcadm, plain, sb } = require('./harness.js');

function setup(credit = 1000) {
  const acc = account('admin', credit);
  const w = new World();
  w.setKey('alice', key(acc));
  return { acc, w, g: w.load('alice') };
}

test('a result is cached for 6 hours: no request and no charge before, a new one after', () => {
  const { acc, w, g } = setup();
  const a = sb('accepted_email');
  assert.equal(g.SVC_VERIFY(a), 'deliverable');
  assert.equal(verifyPosts(acc), 1);
  const [entry] = w.cache('alice').entries();
  assert.equal(entry.ttl, 6 * 3600);
  assert.deepEqual(entry.value, { status: 'deliverable', sub_status: '', score: 95, did_you_mean: '' });
  w.advance(6 * 3600 - 60);
  assert.equal(w.load('alice').SVC_VERIFY(a), 'deliverable');
  assert.deepEqual(plain(w.load('alice').SVC_VERIFY_DETAILS([[a]])), [['deliverable', '', 95, '']]);
  assert.equal(verifyPosts(acc), 1);
  assert.equal(credits(acc).used, 1);
  w.advance(61);
  assert.equal(w.load('alice').SVC_VERIFY(a), 'deliverable');
  assert.equal(verifyPosts(acc), 2);
  assert.equal(credits(acc).used, 2);
});

test('an unknown result is cached for 15 minutes only', () => {
  const { acc, w, g } = setup();
  const u = sb('unknown'), c = sb('catch_all');
  assert.deepEqual(plain(g.SVC_VERIFY([[u], [c]])), [['unknown'], ['unknown']]);
  assert.deepEqual(w.cache('alice').entries().map((e) => e.ttl), [900, 900]);
  w.advance(14 * 60);
  assert.deepEqual(plain(g.SVC_VERIFY([[u], [c]])), [['unknown'], ['unknown']]);
  assert.equal(verifyPosts(acc), 2);
  w.advance(2 * 60);
  assert.deepEqual(plain(g.SVC_VERIFY([[u], [c]])), [['unknown'], ['unknown']]);
  assert.equal(verifyPosts(acc), 4);
});

test('errors are never cached: after a 402, the next calculation asks the service again', () => {
  const { acc, w, g } = setup(0);
  const a = sb('accepted_email');
  assert.match(g.SVC_VERIFY(a), /^SVC error: not enough credits \(402\): 1 needed, 0 available\.$/);
  assert.deepEqual(w.cache('alice').entries(), []);
  svcadm('credits', 'grant', acc, '5');
  assert.equal(g.SVC_VERIFY(a), 'deliverable');
  assert.deepEqual(requests(acc).filter((r) => r.path === '/v1/verify').map((r) => r.status), [402, 200]);
});

test('the cache is per user: an editor\'s formula does not read the owner\'s cache (Google hands it the owner\'s), the editor\'s menu command uses the editor\'s own', () => {
  const accA = account('admin', 100), accB = account('admin', 100);
  const w = new World();
  w.setKey('alice', key(accA));
  w.setKey('bob', key(accB));
  const a = sb('role_based');
  assert.equal(w.load('alice').SVC_VERIFY(a), 'risky');
  assert.equal(w.load('alice').SVC_VERIFY(a), 'risky');
  assert.match(w.load('bob').SVC_VERIFY(a), /^SVC error: a formula may only spend the key/);
  assert.equal(verifyPosts(accA), 1);
  assert.equal(verifyPosts(accB), 0);
  const sheet = w.addSheet('Sheet1', [[a]]);
  w.select('Sheet1', 1, 1, 1, 1);
  w.load('bob').svcVerifySelectedColumn();
  assert.equal(sheet.block(1, 2, 1, 1)[0][0], 'risky');
  assert.equal(verifyPosts(accB), 1);
  assert.equal(w.cache('alice').entries().length, 1);
  assert.equal(w.cache('bob').entries().length, 1);
});
