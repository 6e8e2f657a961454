/* Functions.gs: the custom functions SVC_VERIFY and SVC_VERIFY_DETAILS.
 * Each call takes at most 100 addresses and finishes inside the 30 seconds
 * Sheets gives a custom function (SVC_FUNCTION_BUDGET_MS: no new group of
 * requests starts after it). Google runs them with the spreadsheet owner's
 * user properties whoever calculates them, and does not say who that is
 * unless the script's developer runs them: so a formula spends the key
 * found there only when Google names the person calculating and that person
 * saved the key (svcFormulaKey_); otherwise its cells say so, and nothing
 * is requested nor read from the cache. An error shows in the cell. */

var SVC_FUNCTION_MAX = 100;
var SVC_FUNCTION_BUDGET_MS = 25000;

/* A custom function's argument as rows of cell texts. */
function svcGrid_(range) {
  if (!Array.isArray(range))
    return [[svcCellText_(range)]];
  return range.map(function (row) {
    return (Array.isArray(row) ? row : [row]).map(svcCellText_);
  });
}

function svcFunctionVerify_(name, grid) {
  var flat = [];
  grid.forEach(function (row) { flat = flat.concat(row); });
  var n = flat.filter(function (s) { return s !== ''; }).length;
  if (n > SVC_FUNCTION_MAX)
    throw new Error(name + ' takes at most ' + SVC_FUNCTION_MAX +
        ' addresses a call (this range has ' + n + '); split the range.');
  var payer = svcFormulaKey_();
  if (payer.error)
    return flat.map(function (a) {
      if (a === '')
        return null;
      return svcLooksLikeEmail_(a) ? { error: payer.error } :
          { status: SVC_INVALID_INPUT, sub_status: '', score: '', did_you_mean: '' };
    });
  return svcVerifyAddresses_(flat, { key: payer.key, deadline: Date.now() + SVC_FUNCTION_BUDGET_MS });
}

/**
 * Verifies email addresses with SVC and returns deliverable, undeliverable,
 * risky or unknown for each; invalid_input for a cell that is not an
 * address. Blank cells stay blank. At most 100 addresses a call.
 *
 * @param {A2:A101} range The cell or range of cells holding the addresses.
 * @return The status of each address, in the shape of the range.
 * @customfunction
 */
function SVC_VERIFY(range) {
  var grid = svcGrid_(range);
  var res = svcFunctionVerify_('SVC_VERIFY', grid);
  var i = 0;
  var out = grid.map(function (row) {
    return row.map(function () {
      var r = res[i++];
      return r === null ? '' : r.error ? r.error : r.status;
    });
  });
  return Array.isArray(range) ? out : out[0][0];
}

/**
 * Verifies email addresses with SVC and returns one row per address: status,
 * sub-status, score (0-100) and the suggested correction (did you mean).
 * Blank cells give a blank row. A single column of at most 100 addresses.
 *
 * @param {A2:A101} range The cell or column of cells holding the addresses.
 * @return Four columns per address: status, sub_status, score, did_you_mean.
 * @customfunction
 */
function SVC_VERIFY_DETAILS(range) {
  var grid = svcGrid_(range);
  if (grid.length > 0 && grid[0].length > 1)
    throw new Error('SVC_VERIFY_DETAILS takes a single column of addresses.');
  return svcFunctionVerify_('SVC_VERIFY_DETAILS', grid).map(function (r) {
    if (r === null)
      return ['', '', '', ''];
    if (r.error)
      return [r.error, '', '', ''];
    return [r.status, r.sub_status, r.score, r.did_you_mean];
  });
}
