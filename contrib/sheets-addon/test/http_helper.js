'use strict';
// http_helper.js: the real HTTP behind the fake UrlFetchApp, kept
// synchronous as in Apps Script. The requests ({url, method, headers,
// payload, contentType}) are sent all at once (as UrlFetchApp.fetchAll
// does) by a worker thread, while the test's own thread waits on a shared
// flag (Atomics.wait) and then takes the answers, in the same order:
// {status, headers, body} or {error}. One thread for the whole test file:
// a child process for each fetch cost a node start (about a quarter of a
// second of CPU) each time. Node's standard library only.
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

// The worker thread: each message is {reqs, flag}; the answers go back on
// the port it was given, then the flag is set and the waiting thread woken.
function serveThread() {
  const { parentPort, workerData } = require('node:worker_threads');
  const answers = workerData.port;
  parentPort.on('message', async ({ reqs, flag }) => {
    let out;
    try {
      out = await Promise.all(reqs.map(send));
    } catch (e) {
      out = reqs.map(() => ({ error: String(e && e.message || e) }));
    }
    answers.postMessage(out);
    const f = new Int32Array(flag);
    Atomics.store(f, 0, 1);
    Atomics.notify(f, 0);
  });
}

let thread = null;
let answers = null;

// fetchAllSync(reqs, timeoutMs): the answers, waited for
function fetchAllSync(reqs, timeoutMs = 180000) {
  const { Worker, MessageChannel, receiveMessageOnPort } = require('node:worker_threads');
  if (!thread) {
    const ch = new MessageChannel();
    answers = ch.port1;
    thread = new Worker(__filename, { workerData: { port: ch.port2 }, transferList: [ch.port2] });
    // the test's process may end while the thread waits for more
    thread.unref();
    answers.unref();
  }
  const flag = new SharedArrayBuffer(4);
  thread.postMessage({ reqs, flag });
  if (Atomics.wait(new Int32Array(flag), 0, 0, timeoutMs) === 'timed-out')
    throw new Error('the HTTP requests took over ' + timeoutMs + ' ms');
  const m = receiveMessageOnPort(answers);
  if (!m)
    throw new Error('the HTTP thread answered nothing');
  return m.message;
}

if (require('node:worker_threads').isMainThread)
  module.exports = { fetchAllSync };
else
  serveThread();
