/* Bulk.gs: more than 50 addresses go to one bulk job (POST
 * /v1/verify/bulk with an Idempotency-Key). The job is remembered per
 * spreadsheet in the document properties, so closing the sheet loses
 * nothing: the sidebar (Sidebar.html) polls svcJobPoll every 5 seconds,
 * each poll a short execution, never near the 6-minute limit. Once the job
 * is complete its results are read 1,000 at a time, matched to rows by
 * address, written and cached. svcJobCancel calls DELETE /v1/jobs/{id}.
 *
 * The record (SVC_PENDING_JOB): {state: creating | running | writing,
 * idem, digest, keyId, jobId, sheetId, col, first, last, total, page,
 * written}. "creating" is written before the request, so that running the
 * command again on the same addresses after a lost answer sends the same
 * Idempotency-Key and gets the same job back instead of a second one. */

var SVC_PROP_PENDING = 'SVC_PENDING_JOB';	// document properties
var SVC_RESULTS_PAGE = 1000;
var SVC_PAGES_PER_POLL = 5;

function svcPendingGet_() {
  var v = PropertiesService.getDocumentProperties().getProperty(SVC_PROP_PENDING);
  if (!v)
    return null;
  try {
    return JSON.parse(v);
  } catch (e) {
    return null;
  }
}

function svcPendingSet_(p) {
  PropertiesService.getDocumentProperties().setProperty(SVC_PROP_PENDING, JSON.stringify(p));
}

function svcPendingClear_() {
  PropertiesService.getDocumentProperties().deleteProperty(SVC_PROP_PENDING);
}

function svcDigest_(text) {
  return Utilities.base64EncodeWebSafe(Utilities.computeDigest(
      Utilities.DigestAlgorithm.SHA_256, text, Utilities.Charset.UTF_8));
}

/* Which key a job belongs to, without keeping the key: jobs are visible to
 * their own account only, so a poll with another key could not see it. */
function svcKeyId_(key) {
  return svcDigest_('svc-key\n' + key).slice(0, 16);
}

function svcColumnLetter_(col) {
  var s = '';
  for (; col > 0; col = Math.floor((col - 1) / 26))
    s = String.fromCharCode(65 + (col - 1) % 26) + s;
  return s;
}

/* Starts the bulk job of a selection (svcVerifySelectedColumn has checked
 * it and asked about overwriting; known: svcKnown_ of its addresses). */
function svcBulkStart_(sel, known) {
  var key = svcApiKey_();
  var lock = LockService.getDocumentLock();
  if (!lock.tryLock(10000)) {
    svcToast_('Another bulk job is being started for this spreadsheet; try again in a moment.');
    return;
  }
  try {
    // the cached results, and invalid_input, at once
    svcWriteRows_(sel, known.results);
    SpreadsheetApp.flush();
    var emails = known.todo.map(function (n) { return known.spelling[n]; });
    if (emails.length === 0) {
      svcToast_('Verified ' + sel.addrs.length + ' rows (all results were cached).');
      return;
    }
    var digest = svcDigest_(emails.join('\n'));
    var old = svcPendingGet_();
    var p = {
      state: 'creating',
      idem: old && old.state === 'creating' && old.digest === digest ? old.idem : Utilities.getUuid(),
      digest: digest, keyId: svcKeyId_(key), jobId: '', sheetId: sel.sheet.getSheetId(),
      col: sel.col, first: sel.first, last: sel.last, total: emails.length, page: 1, written: 0
    };
    svcPendingSet_(p);
    var a = svcFetch_(key, {
      method: 'post', path: '/v1/verify/bulk', idempotencyKey: p.idem,
      body: { emails: emails, name: 'Sheets: ' + sel.sheet.getName() + '!' +
          svcColumnLetter_(sel.col) + sel.first + ':' + svcColumnLetter_(sel.col) + sel.last }
    });
    if (a.error) {
      // after a network error the job may exist: keep the key for a retry
      if (a.error.code !== 'network')
        svcPendingClear_();
      svcToast_(svcMessage_(a, emails.length));
      return;
    }
    p.state = 'running';
    p.jobId = a.body.job_id;
    p.total = a.body.total_emails;
    svcPendingSet_(p);
  } finally {
    lock.releaseLock();
  }
  svcToast_('Bulk job started for ' + p.total + ' addresses (' + a.body.credits_charged +
      ' credits). Results are written when it completes.');
  svcShowProgress();
}

/* The menu's "Show bulk job progress": the sidebar, which polls. */
function svcShowProgress() {
  SpreadsheetApp.getUi().showSidebar(
      HtmlService.createHtmlOutputFromFile('Sidebar').setTitle('SVC bulk job'));
}

/* The menu's "Cancel bulk job". */
function svcCancelJob() {
  svcToast_(svcJobCancel().message);
}

/* Runs fn(pending record, key) under the document lock; a result for the
 * sidebar: {state, message, percent}. */
function svcWithJob_(fn) {
  var lock = LockService.getDocumentLock();
  if (!lock.tryLock(1000))
    return { state: 'busy', message: 'Results are being written; please wait.' };
  try {
    var p = svcPendingGet_();
    if (!p)
      return { state: 'none', message: 'No bulk job is running for this spreadsheet.' };
    if (p.state === 'creating')
      return fn(p, '');
    var key = svcApiKey_();
    if (!key)
      return { state: 'error', message: svcMessage_(svcNoKeyAnswer_()) };
    if (svcKeyId_(key) !== p.keyId)
      return { state: 'other', message: 'This spreadsheet\'s bulk job was started with another ' +
          'API key; only its owner can follow or cancel it.' };
    return fn(p, key);
  } finally {
    lock.releaseLock();
  }
}

function svcJobPath_(p, rest) {
  return '/v1/jobs/' + encodeURIComponent(p.jobId) + (rest || '');
}

/* Called by the sidebar every 5 seconds. */
function svcJobPoll() {
  return svcWithJob_(function (p, key) {
    if (p.state === 'creating')
      return { state: 'none', message: 'The bulk job was not created. Run Verify selected column again.' };
    if (p.state === 'running') {
      var a = svcFetch_(key, { method: 'get', path: svcJobPath_(p, '/progress') });
      if (a.status === 404) {
        svcPendingClear_();
        return { state: 'gone', message: 'The bulk job no longer exists.' };
      }
      if (a.error)
        return { state: 'running', message: svcMessage_(a) };
      var b = a.body || {};
      if (b.status === 'cancelled') {
        svcPendingClear_();
        return { state: 'cancelled', message: 'The bulk job was cancelled.' };
      }
      if (b.status === 'failed') {
        var j = svcFetch_(key, { method: 'get', path: svcJobPath_(p) });
        var why = j.body && j.body.error ? j.body.error.message || j.body.error.code : 'no reason given';
        svcPendingClear_();
        return { state: 'failed', message: 'The bulk job failed: ' + why };
      }
      if (b.status !== 'completed')
        return { state: 'running', percent: b.percent || 0,
                 message: 'Verifying: ' + (b.processed_emails || 0) + ' of ' +
                     (b.total_emails || p.total) + ' (' + (b.percent || 0) + '%)' };
      p.state = 'writing';
      svcPendingSet_(p);
    }
    return svcJobWrite_(p, key);
  });
}

/* Rows of the job's range by address. */
function svcRowsByAddress_(sheet, p) {
  var rows = {};
  sheet.getRange(p.first, p.col, p.last - p.first + 1, 1).getValues().forEach(function (r, i) {
    var a = svcCellText_(r[0]);
    if (a === '')
      return;
    var n = svcNormal_(a);
    (rows[n] = rows[n] || []).push(p.first + i);
  });
  return rows;
}

/* Reads up to SVC_PAGES_PER_POLL pages of results and writes them. */
function svcJobWrite_(p, key) {
  var sheet = null;
  SpreadsheetApp.getActiveSpreadsheet().getSheets().forEach(function (s) {
    if (s.getSheetId() === p.sheetId)
      sheet = s;
  });
  if (!sheet) {
    svcPendingClear_();
    return { state: 'failed', message: 'The sheet of the bulk job was deleted.' };
  }
  var rowsOf = svcRowsByAddress_(sheet, p);
  for (var n = 0; n < SVC_PAGES_PER_POLL; n++) {
    var a = svcFetch_(key, { method: 'get', path: svcJobPath_(p, '/results?limit=' +
        SVC_RESULTS_PAGE + '&page=' + p.page) });
    if (a.error)
      return { state: 'writing', percent: 100, message: svcMessage_(a) };
    var results = (a.body && a.body.results) || [];
    var entries = {}, byRow = {}, lo = 0, hi = 0;
    results.forEach(function (r) {
      var e = svcEntry_(r);
      entries[svcNormal_(String(r.email).trim())] = e;
      (rowsOf[svcNormal_(String(r.email).trim())] || []).forEach(function (row) {
        byRow[row] = e;
        lo = lo ? Math.min(lo, row) : row;
        hi = Math.max(hi, row);
      });
    });
    if (lo) {
      var block = sheet.getRange(lo, p.col + 1, hi - lo + 1, 3);
      var vals = block.getValues();
      for (var row in byRow)
        vals[row - lo] = [byRow[row].status, byRow[row].sub_status, byRow[row].score];
      block.setValues(vals);
    }
    svcCachePutAll_(entries);
    p.written += results.length;
    p.page++;
    if (results.length < SVC_RESULTS_PAGE || p.written >= a.body.total) {
      svcPendingClear_();
      svcToast_('The bulk job is complete: ' + p.written + ' results written.');
      return { state: 'done', percent: 100, message: 'Done: ' + p.written + ' results written.' };
    }
    svcPendingSet_(p);
  }
  return { state: 'writing', percent: 100,
           message: 'Writing results: ' + p.written + ' of ' + p.total };
}

/* Called by the sidebar's Cancel button and the menu. */
function svcJobCancel() {
  return svcWithJob_(function (p, key) {
    if (p.state === 'creating') {
      svcPendingClear_();
      return { state: 'none', message: 'The unfinished bulk job was forgotten.' };
    }
    if (p.state === 'writing')
      return { state: 'writing', message: 'The bulk job is complete; its results are being written.' };
    var a = svcFetch_(key, { method: 'delete', path: svcJobPath_(p) });
    if (a.status === 200 || a.status === 404) {
      svcPendingClear_();
      return { state: 'cancelled', message: a.status === 404 ? 'The bulk job no longer exists.' :
          'The bulk job was cancelled; ' + (a.body.credits_refunded || 0) + ' credits were refunded.' };
    }
    if (a.status === 409)
      return { state: 'running', message: 'The bulk job has finished and can no longer be ' +
          'cancelled; its results will be written.' };
    return { state: 'running', message: svcMessage_(a) };
  });
}
