'use strict';
// http_helper.js: the real HTTP behind the fake UrlFetchApp. Run as
// "node http_helper.js --serve" with a JSON array of requests on stdin
// ({url, method, headers, payload, contentType}); sends them all at once
// (as UrlFetchApp.fetchAll does) and prints a JSON array of answers in the
// same order: {status, headers, body} or {error}. Node's standard library
// only. Loaded without --serve (node --test loads every file of a test
// folder), it does nothing.
const http = require('node:http');
const https = require('node:https');

function send(req) {
  return new Promise((resolve) => {
    let u;
    try {
      u = new URL(req.url);
    } catch (e) {
      resolve({ error: 'Invalid argument: ' + req.url });
      return;
    }
    const headers = Object.assign({}, req.headers || {});
    let body = null;
    if (req.payload !== undefined && req.payload !== null) {
      body = Buffer.from(String(req.payload), 'utf8');
      headers['Content-Type'] = req.contentType || 'application/x-www-form-urlencoded';
      headers['Content-Length'] = String(body.length);
    }
    const mod = u.protocol === 'https:' ? https : http;
    const r = mod.request(u, { method: String(req.method || 'get').toUpperCase(), headers,
                               timeout: 60000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers,
                                    body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (e) => resolve({ error: e.message }));
    });
    r.on('timeout', () => r.destroy(new Error('Timeout: ' + req.url)));
    r.on('error', (e) => resolve({ error: (e.code || '') + ' ' + e.message }));
    if (body)
      r.write(body);
    r.end();
  });
}

async function serve() {
  const chunks = [];
  for await (const c of process.stdin)
    chunks.push(c);
  const reqs = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const out = await Promise.all(reqs.map(send));
  process.stdout.write(JSON.stringify(out));
}

if (require.main === module && process.argv[2] === '--serve')
  serve().catch((e) => {
    process.stderr.write(String(e && e.stack || e) + '\n');
    process.exit(1);
  });
