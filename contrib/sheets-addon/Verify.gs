/* Verify.gs: addresses to results, shared by the custom functions and the
 * menu command's small path. A blank cell has no result; a cell not shaped
 * like an email is `invalid_input` without a request; cached results come
 * next; the other addresses go to POST /v1/verify, each once, ten at a
 * time (Api.gs). */

/* A cell's text, trimmed ('' for an empty cell). */
function svcCellText_(v) {
  if (v === null || v === undefined)
    return '';
  return String(v).trim();
}

/* Whether a trimmed cell text is shaped like an email: one @, a local part
 * of 1-64 and a domain of dot-separated labels, no spaces or the
 * characters that mark a display name or a list. The service decides the
 * rest. */
function svcLooksLikeEmail_(s) {
  if (typeof s !== 'string' || s.length > 254)
    return false;
  var m = /^([^\s@]+)@([^\s@]+)$/.exec(s);
  if (!m || m[1].length > 64 || /[<>()\[\]\\,;:"]/.test(s))
    return false;
  if (/^\.|\.$|\.\./.test(m[1]))
    return false;
  return m[2].split('.').every(function (l) {
    return l.length > 0 && l.length <= 63 && !/^-|-$/.test(l);
  });
}

/* The form addresses are matched and cached under. */
function svcNormal_(s) {
  return s.toLowerCase();
}

var SVC_INVALID_INPUT = 'invalid_input';

/* The add-on's result of a verification answer (single or bulk). */
function svcEntry_(r) {
  return { status: r.status, sub_status: r.sub_status || '',
           score: typeof r.score === 'number' ? r.score : '',
           did_you_mean: r.did_you_mean || '' };
}

/* What is known of trimmed cell texts before any request: {results (in
 * order: null for a blank one, an entry for one not shaped like an email or
 * cached, {pending: true} for the others), spelling ({normal: the first
 * spelling}, every address once), todo (the normal forms to ask for)}. */
function svcKnown_(addrs) {
  var results = new Array(addrs.length), spelling = {}, wanted = [];
  for (var i = 0; i < addrs.length; i++) {
    var a = addrs[i];
    if (a === '') {
      results[i] = null;
    } else if (!svcLooksLikeEmail_(a)) {
      results[i] = { status: SVC_INVALID_INPUT, sub_status: '', score: '', did_you_mean: '' };
    } else {
      results[i] = { pending: true };
      if (!spelling.hasOwnProperty(svcNormal_(a))) {
        spelling[svcNormal_(a)] = a;
        wanted.push(svcNormal_(a));
      }
    }
  }
  var cached = svcCacheGetAll_(wanted);
  for (i = 0; i < addrs.length; i++)
    if (results[i] && results[i].pending && cached.hasOwnProperty(svcNormal_(addrs[i])))
      results[i] = cached[svcNormal_(addrs[i])];
  return { results: results, spelling: spelling,
           todo: wanted.filter(function (n) { return !cached.hasOwnProperty(n); }) };
}

/* Results for trimmed cell texts, in order: null for a blank one, an entry
 * ({status, sub_status, score, did_you_mean}), or {error: message}.
 * opts.known: svcKnown_(addrs) when the caller has it; opts.before(results):
 * called once the blank, invalid and cached ones are known, before any
 * request; opts.progress(results): after each group of requests;
 * opts.deadline: as svcFetchAll_'s; opts.key: the key to spend (the
 * user's own by default). */
function svcVerifyAddresses_(addrs, opts) {
  opts = opts || {};
  var known = opts.known || svcKnown_(addrs);
  var out = known.results, todo = known.todo, got = {}, fresh = {};
  var place = function () {	// the answers got so far, into their rows
    for (var j = 0; j < addrs.length; j++)
      if (out[j] && out[j].pending && got.hasOwnProperty(svcNormal_(addrs[j])))
        out[j] = got[svcNormal_(addrs[j])];
  };
  if (opts.before)
    opts.before(out);
  if (todo.length === 0)
    return out;
  var key = opts.hasOwnProperty('key') ? opts.key : svcApiKey_();
  var answers = svcFetchAll_(key, todo.map(function (n) {
    return { method: 'post', path: '/v1/verify', body: { email: known.spelling[n] } };
  }), {
    deadline: opts.deadline,
    onGroup: function (from, to, group) {
      for (var k = from; k < to; k++)
        if (!group[k].error)
          got[todo[k]] = fresh[todo[k]] = svcEntry_(group[k].body || {});
      if (opts.progress) {
        place();
        opts.progress(out);
      }
    }
  });
  svcCachePutAll_(fresh);
  var short402 = answers.filter(function (a) { return a.status === 402; }).length;
  for (var k = 0; k < todo.length; k++)
    if (answers[k].error)
      got[todo[k]] = { error: svcMessage_(answers[k], short402) };
  place();
  return out;
}
