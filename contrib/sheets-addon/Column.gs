/* Column.gs: the menu command "Verify selected column". It writes
 * SVC Status, SVC Sub-status and SVC Score into the three columns to the
 * right of the selection: the selection is trimmed to its last row with
 * data, a first cell that is not an email is the header (the titles go in
 * its row), and non-empty target cells are overwritten only when the person
 * says yes. 50 addresses or fewer: cached results at once, the rest through
 * POST /v1/verify (Verify.gs); more: one bulk job (Bulk.gs). */

var SVC_TITLES = ['SVC Status', 'SVC Sub-status', 'SVC Score'];
var SVC_SINGLE_MAX = 50;

/* The addresses of a selected range: {sheet, col, titleRow (0: none),
 * first, last, addrs (trimmed texts of rows first..last)}, or null when it
 * holds none. A single selected cell stands for its whole column. */
function svcSelection_(range) {
  var sheet = range.getSheet();
  var col = range.getColumn();
  var top = range.getRow(), bottom = range.getLastRow();
  if (range.getNumRows() === 1) {
    top = 1;
    bottom = sheet.getMaxRows();
  }
  bottom = Math.min(bottom, sheet.getLastRow());
  if (bottom < top)
    return null;
  var addrs = sheet.getRange(top, col, bottom - top + 1, 1).getValues().map(function (r) {
    return svcCellText_(r[0]);
  });
  while (addrs.length > 0 && addrs[addrs.length - 1] === '')
    addrs.pop();
  if (addrs.length === 0)
    return null;
  var titleRow = 0, first = top;
  if (!svcLooksLikeEmail_(addrs[0])) {
    titleRow = top;		// the header row
    first = top + 1;
    addrs.shift();
  } else if (top > 1) {		// a header just above the selection
    var above = svcCellText_(sheet.getRange(top - 1, col).getValue());
    if (above !== '' && !svcLooksLikeEmail_(above))
      titleRow = top - 1;
  }
  if (addrs.length === 0)
    return null;
  return { sheet: sheet, col: col, titleRow: titleRow, first: first,
           last: first + addrs.length - 1, addrs: addrs };
}

/* The target cells: the three columns to the right, from the title row
 * (or the first address) to the last address. */
function svcTarget_(sel) {
  var top = sel.titleRow || sel.first;
  return sel.sheet.getRange(top, sel.col + 1, sel.last - top + 1, 3);
}

/* Writes the titles and the rows' results (a result: null, an entry,
 * {error}, {pending}; only entries show). */
function svcWriteRows_(sel, results) {
  var rows = [];
  if (sel.titleRow)
    rows.push(SVC_TITLES.slice());
  results.forEach(function (r) {
    rows.push(r && r.status ? [r.status, r.sub_status, r.score] : ['', '', '']);
  });
  svcTarget_(sel).setValues(rows);
}

function svcToast_(msg) {
  SpreadsheetApp.getActiveSpreadsheet().toast(msg, 'SVC', 10);
}

function svcVerifySelectedColumn() {
  var ui = SpreadsheetApp.getUi();
  var range = SpreadsheetApp.getActiveRange();
  if (!range || range.getNumColumns() !== 1) {
    ui.alert('SVC', 'Select the one column that holds the addresses (a cell of it ' +
        'stands for the whole column), then run Verify selected column again.', ui.ButtonSet.OK);
    return;
  }
  if (!svcApiKey_()) {
    ui.alert('SVC', svcMessage_(svcNoKeyAnswer_()), ui.ButtonSet.OK);
    return;
  }
  var running = svcPendingGet_();
  if (running && running.state !== 'creating') {
    ui.alert('SVC', 'A bulk job is still running for this spreadsheet. Use SVC > Show bulk job ' +
        'progress to follow it, or SVC > Cancel bulk job.', ui.ButtonSet.OK);
    return;
  }
  var sel = svcSelection_(range);
  if (!sel) {
    ui.alert('SVC', 'The selection holds no addresses.', ui.ButtonSet.OK);
    return;
  }
  if (sel.col + 3 > sel.sheet.getMaxColumns())
    sel.sheet.insertColumnsAfter(sel.sheet.getMaxColumns(), sel.col + 3 - sel.sheet.getMaxColumns());
  var filled = svcTarget_(sel).getValues().some(function (row) {
    return row.some(function (v) { return v !== '' && v !== null; });
  });
  if (filled) {
    var target = svcTarget_(sel).getA1Notation();
    if (ui.alert('SVC', 'The cells ' + target + ' are not empty. Overwrite them with the results?',
        ui.ButtonSet.YES_NO) !== ui.Button.YES) {
      svcToast_('Nothing was changed.');
      return;
    }
  }
  var known = svcKnown_(sel.addrs);
  if (Object.keys(known.spelling).length > SVC_SINGLE_MAX)
    return svcBulkStart_(sel, known);
  var res = svcVerifyAddresses_(sel.addrs, {
    known: known,
    before: function (r) {
      svcWriteRows_(sel, r);
      SpreadsheetApp.flush();
    },
    progress: function (r) { svcWriteRows_(sel, r); }
  });
  svcWriteRows_(sel, res);
  var err = res.filter(function (r) { return r && r.error; });
  if (err.length > 0)
    svcToast_(err.length + ' of ' + sel.addrs.length + ' rows were not verified. ' + err[0].error);
  else
    svcToast_('Verified ' + sel.addrs.length + ' rows.');
}
