/* Menu.gs: the SVC menu, and the settings a person makes from it, both in
 * their own user properties: their API key (checked with GET /v1/credits
 * first, never written to the sheet, kept with the email address of who
 * saved it so that a formula can tell whether it may spend it) and the
 * service's address (their own too: nobody else can send their key
 * elsewhere). Menu commands run as the person who clicks: their key. */

function onOpen(e) {
  SpreadsheetApp.getUi().createMenu('SVC')
      .addItem('Verify selected column', 'svcVerifySelectedColumn')
      .addItem('Show bulk job progress', 'svcShowProgress')
      .addItem('Cancel bulk job', 'svcCancelJob')
      .addSeparator()
      .addItem('Set API key', 'svcSetApiKey')
      .addItem('Set service URL', 'svcSetServiceUrl')
      .addToUi();
  try {
    if (svcPendingGet_())
      svcToast_('A bulk verification job of this spreadsheet is still open: ' +
          'SVC > Show bulk job progress writes its results.');
  } catch (err) {
    // a simple trigger may not be allowed to read the properties
  }
}

function onInstall(e) {
  onOpen(e);
}

function svcSetApiKey() {
  var ui = SpreadsheetApp.getUi();
  var r = ui.prompt('SVC API key', 'Paste your API key. It is kept in your own user ' +
      'properties, never in the sheet. The menu commands you run are charged to it. ' +
      'Formulas (=SVC_VERIFY) use it only in spreadsheets you own and only when Google ' +
      'says that you are the one calculating them; in a shared spreadsheet use ' +
      'SVC > Verify selected column.', ui.ButtonSet.OK_CANCEL);
  if (r.getSelectedButton() !== ui.Button.OK)
    return;
  var key = r.getResponseText().trim();
  if (key === '') {
    ui.alert('SVC', 'No key was entered; nothing changed.', ui.ButtonSet.OK);
    return;
  }
  var a = svcFetch_(key, { method: 'get', path: '/v1/credits' });
  if (a.error) {
    ui.alert('SVC', 'The key was not saved. ' + (a.status === 401 ?
        'The service rejected it (401): check that it was copied whole.' : svcMessage_(a)),
        ui.ButtonSet.OK);
    return;
  }
  var who = svcActiveEmail_();
  var props = PropertiesService.getUserProperties();
  props.setProperty(SVC_PROP_KEY, key);
  if (who !== '')
    props.setProperty(SVC_PROP_KEY_USER, who);
  else
    props.deleteProperty(SVC_PROP_KEY_USER);
  ui.alert('SVC', 'The key was saved. Balance: ' + a.body.balance + ' credits.' + (who === '' ?
      ' Google did not give your email address, so formulas will not spend this key; ' +
      'SVC > Verify selected column will.' : ''), ui.ButtonSet.OK);
}

function svcSetServiceUrl() {
  var ui = SpreadsheetApp.getUi();
  var r = ui.prompt('SVC service URL', 'The address of the SVC API, for example ' +
      'https://verify.example.com (now ' + svcBaseUrl_() + ').', ui.ButtonSet.OK_CANCEL);
  if (r.getSelectedButton() !== ui.Button.OK)
    return;
  var url = r.getResponseText().trim().replace(/\/+$/, '');
  if (!/^https?:\/\/[^\s\/?#]+(\/[^\s?#]*)?$/.test(url)) {
    ui.alert('SVC', 'That is not an http(s) address; nothing changed.', ui.ButtonSet.OK);
    return;
  }
  PropertiesService.getUserProperties().setProperty(SVC_PROP_BASE_URL, url);
  ui.alert('SVC', 'The service URL was saved: ' + url, ui.ButtonSet.OK);
}
