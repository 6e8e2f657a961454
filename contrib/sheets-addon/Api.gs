/* Api.gs: the add-on's HTTP side. Where the service is and the user's key
 * (both in the user's own properties), requests through
 * UrlFetchApp in parallel groups of ten, the retry of 429 answers after
 * Retry-After (twice at most), and the messages a person sees for 401, 402,
 * 429 and network errors. Every other file talks to the service through
 * svcFetchAll_ and svcFetch_. */

var SVC_ADDON_VERSION = '1.0.0';
// The service's address for those who never used "SVC > Set service URL":
// edit it before pushing the add-on, so that nobody has to.
var SVC_DEFAULT_BASE_URL = 'https://api.example.com';
var SVC_PARALLEL = 10;		// requests in flight at once (fetchAll)
var SVC_MAX_RETRIES = 2;	// a 429 is retried this many times
// user properties: the key goes only where its owner said
var SVC_PROP_BASE_URL = 'SVC_BASE_URL';
var SVC_PROP_KEY = 'SVC_API_KEY';
var SVC_PROP_KEY_USER = 'SVC_API_KEY_USER';	// the email of who saved it

function svcBaseUrl_() {
  var u = PropertiesService.getUserProperties().getProperty(SVC_PROP_BASE_URL);
  return String(u || SVC_DEFAULT_BASE_URL).replace(/\/+$/, '');
}

function svcApiKey_() {
  return PropertiesService.getUserProperties().getProperty(SVC_PROP_KEY) || '';
}

/* The email address Google gives for the person running this execution, or
 * '' when it gives none (it gives none in a custom function unless the
 * script's developer runs it, nor where a security policy hides it). */
function svcActiveEmail_() {
  try {
    return String(Session.getActiveUser().getEmail() || '').trim().toLowerCase();
  } catch (e) {
    return '';	// not allowed here: nobody known
  }
}

var SVC_MSG_FORMULA_PAYER = 'SVC error: a formula may only spend the key of the person ' +
    'calculating it, and Google does not say who that is here. Use SVC > Verify selected column.';

/* The key a custom function may spend: {key} or {error: message}. Google
 * runs custom functions with the spreadsheet owner's user properties, for
 * whoever calculates them, so the key found there is spent only when
 * Google names the person calculating and that person saved it. An empty
 * key is the no-key case. */
function svcFormulaKey_() {
  var p = PropertiesService.getUserProperties();
  var key = p.getProperty(SVC_PROP_KEY) || '';
  if (key === '')
    return { key: '' };
  var saver = String(p.getProperty(SVC_PROP_KEY_USER) || '').toLowerCase();
  var who = svcActiveEmail_();
  if (saver === '' || who === '' || who !== saver)
    return { error: SVC_MSG_FORMULA_PAYER };
  return { key: key };
}

/* A response header by name, whatever its case. */
function svcHeader_(headers, name) {
  var want = name.toLowerCase();
  for (var h in headers) {
    if (h.toLowerCase() === want) {
      var v = headers[h];
      return Array.isArray(v) ? v[0] : v;
    }
  }
  return null;
}

/* The UrlFetchApp request of {method, path, body, idempotencyKey}. */
function svcRequest_(key, req) {
  var r = {
    url: svcBaseUrl_() + req.path,
    method: req.method || 'get',
    muteHttpExceptions: true,
    followRedirects: false,
    headers: { Authorization: 'Bearer ' + key }
  };
  if (req.body !== undefined) {
    r.contentType = 'application/json';
    r.payload = JSON.stringify(req.body);
  }
  if (req.idempotencyKey)
    r.headers['Idempotency-Key'] = req.idempotencyKey;
  return r;
}

/* An answer: {status, body (parsed JSON or null), error ({code, message,
 * details} or null), retryAfter (seconds or null)}. status 0: the service
 * could not be reached (error.code 'network'). */
function svcAnswer_(resp) {
  var status = resp.getResponseCode();
  var text = resp.getContentText();
  var body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch (e) {
    body = null;
  }
  var a = { status: status, body: body, error: null, retryAfter: null };
  if (status < 200 || status > 299) {
    var err = body && body.error;
    if (err && typeof err === 'object')
      a.error = { code: String(err.code || ''), message: String(err.message || ''),
                  details: err.details || null };
    else	// the flat 429 shape, or not JSON at all
      a.error = { code: typeof err === 'string' ? err : 'http_' + status,
                  message: typeof err === 'string' ? err : String(text || '').slice(0, 200),
                  details: null };
    var ra = parseInt(svcHeader_(resp.getHeaders(), 'Retry-After'), 10);
    if (ra >= 0)
      a.retryAfter = ra;
  }
  return a;
}

function svcNetworkAnswer_(e) {
  var msg = String(e && e.message ? e.message : e).replace(/^Exception:\s*/, '');
  return { status: 0, body: null, retryAfter: null,
           error: { code: 'network', message: msg, details: null } };
}

function svcNoKeyAnswer_() {
  return { status: 0, body: null, retryAfter: null,
           error: { code: 'no_key', message: 'no API key', details: null } };
}

/* Whether an answer stops the requests still to be sent: every error but a
 * rejected address (400) is the same for the next request too. */
function svcAnswerStops_(a) {
  return a.error !== null && a.status !== 400;
}

/* Sends the requests, SVC_PARALLEL at a time, and returns their answers in
 * order. A group's 429 answers are sent again after the longest
 * Retry-After (at least 1 s), SVC_MAX_RETRIES times at most. After an
 * answer that stops (svcAnswerStops_) nothing more is sent: the requests
 * left get that answer too, with .skipped set. opts.deadline (ms since the
 * epoch): no group starts after it, and no wait would end after it; the
 * requests left get error.code 'time_limit'. opts.onGroup(from, to,
 * answers): called after each group (answers[from..to-1] are its own).
 * key: the API key ('' for none). */
function svcFetchAll_(key, reqs, opts) {
  opts = opts || {};
  var out = new Array(reqs.length);
  var stop = null;
  if (!key)
    stop = svcNoKeyAnswer_();
  for (var start = 0; start < reqs.length; start += SVC_PARALLEL) {
    var idx = [];
    for (var i = start; i < Math.min(start + SVC_PARALLEL, reqs.length); i++)
      idx.push(i);
    if (stop === null && start > 0 && opts.deadline && Date.now() >= opts.deadline)
      stop = { status: 0, body: null, retryAfter: null,
               error: { code: 'time_limit', message: 'time limit reached', details: null } };
    if (stop !== null) {
      for (var s = 0; s < idx.length; s++)
        out[idx[s]] = svcSkipped_(stop);
      continue;
    }
    for (var attempt = 0; idx.length > 0; attempt++) {
      var answers;
      try {
        answers = UrlFetchApp.fetchAll(idx.map(function (n) {
          return svcRequest_(key, reqs[n]);
        })).map(svcAnswer_);
      } catch (e) {	// one unreachable request fails the whole group
        var net = svcNetworkAnswer_(e);
        answers = idx.map(function () { return net; });
      }
      var again = [], wait = 0;
      for (var k = 0; k < idx.length; k++) {
        var a = answers[k];
        if (a.status === 429 && attempt < SVC_MAX_RETRIES) {
          again.push(idx[k]);
          wait = Math.max(wait, a.retryAfter || 1);
        }
        out[idx[k]] = a;
      }
      if (again.length > 0 && opts.deadline && Date.now() + wait * 1000 > opts.deadline)
        again = [];	// the wait would not fit: the 429 answers stay
      if (again.length > 0)
        Utilities.sleep(wait * 1000);
      idx = again;
    }
    for (var n2 = start; n2 < Math.min(start + SVC_PARALLEL, reqs.length); n2++)
      if (stop === null && svcAnswerStops_(out[n2]))
        stop = out[n2];
    if (opts.onGroup)
      opts.onGroup(start, Math.min(start + SVC_PARALLEL, reqs.length), out);
  }
  return out;
}

function svcSkipped_(a) {
  return { status: a.status, body: a.body, error: a.error, retryAfter: a.retryAfter, skipped: true };
}

/* One request, with the same retries. */
function svcFetch_(key, req, opts) {
  return svcFetchAll_(key, [req], opts)[0];
}

/* What a person reads for an error answer. needed: the credits the work
 * needs, for a 402 whose details say less (single verifications). */
function svcMessage_(a, needed) {
  var e = a.error || { code: '', message: '' };
  switch (e.code) {
  case 'no_key':
    return 'SVC error: no API key. Use SVC > Set API key.';
  case 'network':
    return 'SVC error: cannot reach the service at ' + svcBaseUrl_() + ' (' + e.message + ').';
  case 'time_limit':
    return 'SVC error: time limit reached; recalculate for the rest (results so far are cached).';
  }
  switch (a.status) {
  case 401:
    return 'SVC error: the API key was rejected (401). Use SVC > Set API key.';
  case 402:
    var d = e.details || {};
    var req = Math.max(Number(d.required) || 0, needed || 0);
    return 'SVC error: not enough credits (402): ' + req + ' needed, ' +
        (Number(d.available) || 0) + ' available.';
  case 429:
    return 'SVC error: rate limit reached (429); try again in ' + (a.retryAfter || 1) + ' s.';
  }
  return 'SVC error: ' + a.status + ' ' + e.code + (e.message ? ': ' + e.message : '');
}
