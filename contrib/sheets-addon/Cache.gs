/* Cache.gs: results kept per user (CacheService's user cache) so that a
 * recalculation or a second run costs nothing: 6 hours for a result,
 * 15 minutes for an `unknown` one (it may be known soon), errors never.
 * Single and bulk results go into the same cache. An entry is a result as
 * the add-on shows it: {status, sub_status, score, did_you_mean}. */

var SVC_CACHE_TTL = 21600;		// 6 h, CacheService's longest
var SVC_CACHE_TTL_UNKNOWN = 900;	// 15 min

/* The cache key of an address at this service: a digest, so that any
 * address fits CacheService's 250-character keys. */
function svcCacheKey_(normal) {
  var d = Utilities.computeDigest(Utilities.DigestAlgorithm.SHA_256,
      svcBaseUrl_() + '\n' + normal, Utilities.Charset.UTF_8);
  return 'svc1:' + Utilities.base64EncodeWebSafe(d);
}

/* {normal address: entry} of the cached ones among the normal addresses. */
function svcCacheGetAll_(normals) {
  var keys = normals.map(svcCacheKey_);
  var got = keys.length ? CacheService.getUserCache().getAll(keys) : {};
  var out = {};
  for (var i = 0; i < normals.length; i++) {
    var v = got[keys[i]];
    if (v === undefined || v === null)
      continue;
    try {
      out[normals[i]] = JSON.parse(v);
    } catch (e) {
      // a damaged entry is a miss
    }
  }
  return out;
}

/* Keeps {normal address: entry}, each for its status's time. */
function svcCachePutAll_(entries) {
  var longer = {}, shorter = {}, nl = 0, ns = 0;
  for (var normal in entries) {
    var e = entries[normal];
    if (!e || !e.status)
      continue;
    var v = JSON.stringify({ status: e.status, sub_status: e.sub_status || '',
                             score: e.score, did_you_mean: e.did_you_mean || '' });
    if (e.status === 'unknown') {
      shorter[svcCacheKey_(normal)] = v;
      ns++;
    } else {
      longer[svcCacheKey_(normal)] = v;
      nl++;
    }
  }
  var c = CacheService.getUserCache();
  if (nl)
    c.putAll(longer, SVC_CACHE_TTL);
  if (ns)
    c.putAll(shorter, SVC_CACHE_TTL_UNKNOWN);
}
