'use strict';
// manifest.test.js: what Apps Script reads without running anything: the
// manifest's scopes, the version, the menu's and the sidebar's functions
// (public: no trailing _, which Apps Script keeps from menus and
// google.script.run), the custom functions' @customfunction comments.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { World, ADDON, gsFiles } = require('./harness.js');

test('appsscript.json asks for the current spreadsheet, external requests, the sidebar and the user\'s email, nothing more', () => {
  const m = JSON.parse(fs.readFileSync(path.join(ADDON, 'appsscript.json'), 'utf8'));
  assert.equal(m.runtimeVersion, 'V8');
  // script.container.ui is what Ui.showSidebar needs (the progress bar);
  // userinfo.email is what Session.getActiveUser().getEmail() needs (who
  // saved a key, who calculates a formula); no trigger scope
  // (script.scriptapp), no Drive, no sending of e-mail
  assert.deepEqual(m.oauthScopes.slice().sort(), [
    'https://www.googleapis.com/auth/script.container.ui',
    'https://www.googleapis.com/auth/script.external_request',
    'https://www.googleapis.com/auth/spreadsheets.currentonly',
    'https://www.googleapis.com/auth/userinfo.email',
  ]);
  const code = gsFiles().map((f) => fs.readFileSync(path.join(ADDON, f), 'utf8')).join('\n');
  assert.doesNotMatch(code, /ScriptApp|DriveApp|MailApp|GmailApp/);
  assert.deepEqual([...code.matchAll(/Session\.\w+/g)].map((x) => x[0]), ['Session.getActiveUser']);
});

test('the add-on is version 1.0.0, and its README says so', () => {
  const g = new World().load('alice');
  assert.equal(g.SVC_ADDON_VERSION, '1.0.0');
  assert.match(fs.readFileSync(path.join(ADDON, 'README.md'), 'utf8'), /1\.0\.0/);
});

test('every menu item and every function the sidebar calls is a public global function', () => {
  const w = new World();
  const g = w.load('alice');
  g.onOpen({ authMode: 'NONE' });
  const [menu] = w.of('menu');
  assert.equal(menu.name, 'SVC');
  assert.equal(menu.items[0].caption, 'Verify selected column');
  const html = fs.readFileSync(path.join(ADDON, 'Sidebar.html'), 'utf8');
  const fromSidebar = [...html.matchAll(/\.(svc\w+)\(\)/g)].map((m) => m[1]);
  assert.deepEqual(fromSidebar.sort(), ['svcJobCancel', 'svcJobPoll']);
  for (const fn of menu.items.map((i) => i.fn).concat(fromSidebar, ['onInstall', 'SVC_VERIFY', 'SVC_VERIFY_DETAILS'])) {
    assert.equal(typeof g[fn], 'function', fn);
    assert.doesNotMatch(fn, /_$/);
  }
});

test('the custom functions carry @customfunction, so that Sheets offers them with their help', () => {
  const src = fs.readFileSync(path.join(ADDON, 'Functions.gs'), 'utf8');
  for (const fn of ['SVC_VERIFY', 'SVC_VERIFY_DETAILS'])
    assert.match(src, new RegExp('@customfunction\\s*\\*/\\s*function ' + fn + '\\('), fn);
});
