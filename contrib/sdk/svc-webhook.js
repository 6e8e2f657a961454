// svc-webhook.js: checks the signature of a webhook or callback delivery
// from svc, for receivers written for Node.js (standard library only). It
// behaves exactly like libsvc-sdk's svc_webhook_verify (svc_webhook_verify(3))
// and the Python helper; all three pass tests/sdk/vectors.json.
//
//   const { verify } = require('./svc-webhook');
//   // rawBody: the request body as received (a Buffer), before any parsing
//   const result = verify(req.headers['x-service-signature'], rawBody,
//                         [process.env.SVC_WEBHOOK_SECRET]);
//   if (result !== 'ok') { res.statusCode = 400; return res.end(result); }
//
// The header is "t=<unix seconds>,v1=<hex HMAC-SHA256>[,v1=...]": one v1
// per secret that signs (two while a secret is being rotated). Each v1 is
// HMAC-SHA256(secret, "<t>.<raw body>"). Results: 'ok', 'bad_header',
// 'no_matching_signature', 'timestamp_outside_tolerance'. De-duplicate
// deliveries on the body's event_id: a delivery may come more than once.
'use strict';

const crypto = require('crypto');

const HEADER = 'X-Service-Signature';
const ID_HEADER = 'X-Webhook-ID';
const TOLERANCE = 300;
const HEADER_MAX = 8192;
const T_DIGITS = 18;
const V1_MAX = 16;

const OK = 'ok';
const BAD_HEADER = 'bad_header';
const NO_MATCH = 'no_matching_signature';
const TIMESTAMP = 'timestamp_outside_tolerance';

function trim(s) {
  return s.replace(/^[ \t]+|[ \t]+$/g, '');
}

// { t (the digits as sent), v1: [Buffer of 32 bytes, or null] } or null.
function parse(header) {
  if (typeof header !== 'string' || header.length === 0 ||
      Buffer.byteLength(header, 'utf8') > HEADER_MAX)
    return null;
  let t = null;
  const v1 = [];
  for (const raw of header.split(',')) {
    const item = trim(raw);
    const eq = item.indexOf('=');
    if (eq <= 0)
      return null;
    const name = item.slice(0, eq);
    const value = item.slice(eq + 1);
    if (name === 't') {
      if (t !== null || !/^[0-9]+$/.test(value) || value.length > T_DIGITS)
        return null;
      t = value;
    } else if (name === 'v1') {
      if (v1.length < V1_MAX)
        v1.push(/^[0-9a-fA-F]{64}$/.test(value) ?
          Buffer.from(value, 'hex') : null);
    }
  }
  if (t === null || v1.length === 0)
    return null;
  return { t, v1 };
}

function signedBy(sig, secret, body) {
  if (typeof secret !== 'string' || secret.length === 0)
    return false;
  const mac = crypto.createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(sig.t + '.').update(body).digest();
  let match = false;
  for (const v of sig.v1)
    if (v !== null && crypto.timingSafeEqual(mac, v))
      match = true;
  return match;
}

// verify(header, body, secrets, { tolerance = 300, now = Date.now() / 1000 })
// header: the X-Service-Signature value; body: the raw body (Buffer, or a
// string taken as UTF-8); secrets: a string or an array of them.
function verify(header, body, secrets, options = {}) {
  const sig = parse(header);
  if (sig === null)
    return BAD_HEADER;
  const list = Array.isArray(secrets) ? secrets :
    (secrets === undefined || secrets === null ? [] : [secrets]);
  const raw = Buffer.isBuffer(body) ? body : Buffer.from(body || '', 'utf8');
  let match = false;
  for (const s of list)
    if (signedBy(sig, s, raw))
      match = true;
  if (!match)
    return NO_MATCH;
  let tolerance = options.tolerance === undefined ? TOLERANCE :
    Math.floor(options.tolerance);
  if (!(tolerance >= 0))
    tolerance = 0;
  const now = options.now === undefined ? Math.floor(Date.now() / 1000) :
    options.now;
  let diff = BigInt(Math.floor(now)) - BigInt(sig.t);
  if (diff < 0n)
    diff = -diff;
  return diff <= BigInt(tolerance) ? OK : TIMESTAMP;
}

module.exports = {
  verify, HEADER, ID_HEADER, TOLERANCE,
  OK, BAD_HEADER, NO_MATCH, TIMESTAMP,
};
