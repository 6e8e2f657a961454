// svc-webhook.test.js: the Node helper against the shared vectors
// (tests/sdk/vectors.json, or $SVC_SDK_VECTORS) and a few cases of its
// own (Buffer bodies, one secret as a string, the default clock).
// Run: node --test contrib/sdk/svc-webhook.test.js
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const svc = require('./svc-webhook');

const file = process.env.SVC_SDK_VECTORS ||
  path.join(__dirname, '..', '..', 'tests', 'sdk', 'vectors.json');
const vectors = JSON.parse(fs.readFileSync(file, 'utf8')).vectors;

test('the shared vectors are there', () => {
  assert.ok(vectors.length >= 30);
});

for (const v of vectors) {
  test('vector: ' + v.name, () => {
    assert.strictEqual(svc.verify(v.header, v.body, v.secrets,
      { tolerance: v.tolerance, now: v.now }), v.expected);
  });
}

function sign(secret, t, body) {
  return crypto.createHmac('sha256', secret).update(t + '.').update(body)
    .digest('hex');
}

test('a Buffer body with a NUL byte, and one secret as a string', () => {
  const body = Buffer.from([0x7b, 0x00, 0x7d]);
  const header = 't=5,v1=' + sign('k', '5', body);
  assert.strictEqual(svc.verify(header, body, 'k', { now: 5 }), svc.OK);
  assert.strictEqual(svc.verify(header, body.subarray(0, 2), 'k',
    { now: 5 }), svc.NO_MATCH);
});

test('the default clock is now, the default tolerance 300 s', () => {
  const t = String(Math.floor(Date.now() / 1000) - 200);
  const header = 't=' + t + ',v1=' + sign('k', t, 'x');
  assert.strictEqual(svc.verify(header, 'x', ['k']), svc.OK);
  const old = String(Math.floor(Date.now() / 1000) - 400);
  assert.strictEqual(svc.verify('t=' + old + ',v1=' + sign('k', old, 'x'),
    'x', ['k']), svc.TIMESTAMP);
});

test('no header or no secrets is never ok', () => {
  assert.strictEqual(svc.verify(undefined, 'x', ['k']), svc.BAD_HEADER);
  assert.strictEqual(svc.verify('t=5,v1=' + sign('k', '5', 'x'), 'x', null,
    { now: 5 }), svc.NO_MATCH);
});
