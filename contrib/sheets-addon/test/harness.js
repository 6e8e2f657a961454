'use strict';
// harness.js: runs the add-on's .gs files in node:vm with small fakes of
// the Apps Script services, and reaches the real svc stack that
// tests/integration/test_sheets_addon.sh started.
//
//   const world = new World();            // a spreadsheet, its properties, caches
//   world.addSheet('Sheet1', [['Email'], ['a@x.example']]);
//   world.select('Sheet1', 1, 1, 2, 1);   // the active range
//   const g = world.load('alice');        // the add-on's globals, run as alice
//   g.svcVerifySelectedColumn();
//
// A World outlives its loads: load() again is a reload (a new execution,
// the same sheet, properties and caches). The fakes keep to what the
// add-on uses, and throw where Apps Script would (range outside the sheet,
// cache times over 6 hours, property values over 9 kB), so that a misuse
// fails here rather than in Google's servers. UrlFetchApp makes real HTTP
// requests (http_helper.js: a worker thread, so that fetch and fetchAll
// stay synchronous as in Apps Script). world.log records what happened in
// order: {kind: 'http' | 'fetchAll' | 'write' | 'flush' | 'toast' | 'alert'
// | 'prompt' | 'sidebar' | 'menu' | 'sleep', ...}.
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const cp = require('node:child_process');
const crypto = require('node:crypto');

const ADDON = path.resolve(__dirname, '..');
const { fetchAllSync } = require('./http_helper.js');

// ------------------------------------------------------------ the stack

const env = {
  baseUrl: process.env.SVC_TEST_BASE_URL,
  conf: process.env.SVC_TEST_CONF,
  svcadm: process.env.SVC_TEST_SVCADM,
  worker: process.env.SVC_TEST_WORKER,
  log: process.env.SVC_TEST_LOG,
  db: process.env.SVC_TEST_DB_SOCKET,
  sandbox: 'sandbox.' + (process.env.SVC_TEST_SERVICE_DOMAIN || 'svc.example'),
};

function needStack() {
  for (const k of ['baseUrl', 'conf', 'svcadm', 'worker', 'log', 'db'])
    if (!env[k])
      throw new Error('the svc stack is not set up (' + k + ' missing): run these tests ' +
          'through tests/integration/test_sheets_addon.sh');
}

function svcadm(...args) {
  needStack();
  return cp.execFileSync(env.svcadm, ['-c', env.conf, ...args],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

// sql(statement): runs SQL as root on the test database; the rows, tab-separated
function sql(statement) {
  needStack();
  return cp.execFileSync('mariadb', ['--no-defaults', '--socket=' + env.db, '--user=root', '-N', '-B', 'svc',
    '-e', statement], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

// account(tier, credits): a new account's id
function account(tier = 'admin', credits = 1000) {
  return svcadm('account', 'create', '--email', 'sheets' + crypto.randomBytes(6).toString('hex') +
      '@example.com', '--tier', tier, '--credits', String(credits));
}

// key(account, extra svcadm options...): a key with every scope
function key(acc, ...opts) {
  return svcadm('key', 'create', '--account', acc, '--scopes', '*', ...opts);
}

// credits(account): {balance, used, refunded, granted} from svcadm
function credits(acc) {
  const out = {};
  for (const line of svcadm('credits', 'show', acc).split('\n')) {
    const [k, v] = line.split(/\s+/);
    out[k] = Number(v);
  }
  return out;
}

// requests(account): the requests svc-api logged for an account, in order:
// [{method, path, status, error}] (the server's own record)
function requests(acc) {
  needStack();
  const out = [];
  for (const line of fs.readFileSync(env.log, 'utf8').split('\n')) {
    if (!line.includes('event=request ') || !line.includes(' account=' + acc))
      continue;
    const f = {};
    for (const m of line.matchAll(/(\w+)=("(?:[^"\\]|\\.)*"|\S+)/g))
      f[m[1]] = m[2].replace(/^"|"$/g, '');
    if (f.account === acc)
      out.push({ method: f.method, path: f.path, status: Number(f.status), error: f.error || null });
  }
  return out;
}

// verifyPosts(account): how many POST /v1/verify the server logged for it
function verifyPosts(acc) {
  return requests(acc).filter((r) => r.method === 'POST' && r.path === '/v1/verify').length;
}

// httpAll(requests): the helper's answers ({status, headers, body} or {error})
function httpAll(reqs) {
  return fetchAllSync(reqs);
}

// api(method, path, key, body): a request of the test's own, {status, body}
function api(method, p, apiKey, body) {
  needStack();
  const req = { url: env.baseUrl + p, method, headers: apiKey ? { Authorization: 'Bearer ' + apiKey } : {} };
  if (body !== undefined) {
    req.payload = JSON.stringify(body);
    req.contentType = 'application/json';
  }
  const [r] = httpAll([req]);
  if (r.error)
    throw new Error(method + ' ' + p + ': ' + r.error);
  let parsed = null;
  try {
    parsed = JSON.parse(r.body);
  } catch (e) {
    parsed = r.body;
  }
  return { status: r.status, body: parsed, headers: r.headers };
}

// runWorker(jobId): svc-worker --once until the job is finished
function runWorker(jobId, apiKey) {
  needStack();
  for (let i = 0; i < 60; i++) {
    cp.execFileSync(env.worker, ['-c', env.conf, '--once'], { stdio: 'ignore', timeout: 120000 });
    const st = api('GET', '/v1/jobs/' + jobId, apiKey).body.status;
    if (['completed', 'failed', 'cancelled'].includes(st))
      return st;
    sleepMs(500);
  }
  throw new Error('job ' + jobId + ' did not finish');
}

function sleepMs(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

// plain(x): a value from the vm's realm as plain JSON data of this one
function plain(x) {
  return x === undefined ? undefined : JSON.parse(JSON.stringify(x));
}

// sb(local): an address at the sandbox domain
function sb(local) {
  return local + '@' + env.sandbox;
}

// ------------------------------------------------------------ fakes

class PropertyStore {
  constructor() {
    this.map = new Map();
  }
  api() {
    const m = this.map;
    const self = {
      getProperty: (k) => (m.has(k) ? m.get(k) : null),
      setProperty: (k, v) => {
        v = String(v);
        if (Buffer.byteLength(v) > 9 * 1024)
          throw new Error('Exception: Argument too large: value');
        m.set(String(k), v);
        return self;
      },
      deleteProperty: (k) => {
        m.delete(k);
        return self;
      },
      getProperties: () => Object.fromEntries(m),
      getKeys: () => [...m.keys()],
      setProperties: (o) => {
        for (const k of Object.keys(o))
          self.setProperty(k, o[k]);
        return self;
      },
      deleteAllProperties: () => {
        m.clear();
        return self;
      },
    };
    return self;
  }
}

class CacheStore {
  constructor(world) {
    this.world = world;
    this.map = new Map();	// key -> {value, expires (ms), ttl (s)}
  }
  live(k) {
    const e = this.map.get(k);
    if (!e)
      return null;
    if (e.expires <= this.world.now) {
      this.map.delete(k);
      return null;
    }
    return e;
  }
  put(k, v, ttl = 600) {
    if (typeof k !== 'string' || k.length > 250)
      throw new Error('Exception: Argument too large: key');
    if (typeof v !== 'string' || Buffer.byteLength(v) > 100 * 1024)
      throw new Error('Exception: Argument too large: value');
    if (!(ttl >= 1 && ttl <= 21600))
      throw new Error('Exception: Invalid argument: expirationInSeconds ' + ttl);
    this.map.set(k, { value: v, ttl, expires: this.world.now + ttl * 1000 });
  }
  api() {
    return {
      get: (k) => {
        const e = this.live(k);
        return e ? e.value : null;
      },
      getAll: (keys) => {
        const out = {};
        for (const k of keys) {
          const e = this.live(k);
          if (e)
            out[k] = e.value;
        }
        return out;
      },
      put: (k, v, ttl) => this.put(k, v, ttl),
      putAll: (o, ttl) => {
        for (const k of Object.keys(o))
          this.put(k, o[k], ttl);
      },
      remove: (k) => this.map.delete(k),
      removeAll: (keys) => keys.forEach((k) => this.map.delete(k)),
    };
  }
  // the live entries: [{key, value (parsed), ttl, left (s)}]
  entries() {
    const out = [];
    for (const k of [...this.map.keys()]) {
      const e = this.live(k);
      if (e)
        out.push({ key: k, value: JSON.parse(e.value), ttl: e.ttl, left: (e.expires - this.world.now) / 1000 });
    }
    return out;
  }
}

const Button = { OK: 'OK', CANCEL: 'CANCEL', YES: 'YES', NO: 'NO', CLOSE: 'CLOSE' };
const ButtonSet = { OK: 'OK', OK_CANCEL: 'OK_CANCEL', YES_NO: 'YES_NO', YES_NO_CANCEL: 'YES_NO_CANCEL' };

function a1(row, col, rows, cols) {
  const letter = (c) => {
    let s = '';
    for (; c > 0; c = Math.floor((c - 1) / 26))
      s = String.fromCharCode(65 + (c - 1) % 26) + s;
    return s;
  };
  const start = letter(col) + row;
  return rows === 1 && cols === 1 ? start : start + ':' + letter(col + cols - 1) + (row + rows - 1);
}

class Sheet {
  constructor(world, id, name, rows, maxRows, maxCols) {
    this.world = world;
    this.id = id;
    this.name = name;
    this.maxRows = Math.max(maxRows, rows.length);
    this.maxCols = maxCols;
    this.cells = [];	// cells[r][c], 0-based, '' when empty
    rows.forEach((r, i) => r.forEach((v, j) => this.set(i + 1, j + 1, v)));
  }
  get(r, c) {
    const row = this.cells[r - 1];
    const v = row ? row[c - 1] : undefined;
    return v === undefined || v === null ? '' : v;
  }
  set(r, c, v) {
    while (this.cells.length < r)
      this.cells.push([]);
    this.cells[r - 1][c - 1] = v;
  }
  lastRow() {
    for (let r = this.cells.length; r > 0; r--)
      if ((this.cells[r - 1] || []).some((v) => v !== '' && v !== undefined && v !== null))
        return r;
    return 0;
  }
  // column(c, from, to): the values of a column, as a list
  column(c, from = 1, to = this.lastRow()) {
    const out = [];
    for (let r = from; r <= to; r++)
      out.push(this.get(r, c));
    return out;
  }
  // block(r, c, rows, cols): a 2-D array of values
  block(r, c, rows, cols) {
    const out = [];
    for (let i = 0; i < rows; i++) {
      const row = [];
      for (let j = 0; j < cols; j++)
        row.push(this.get(r + i, c + j));
      out.push(row);
    }
    return out;
  }
  range(r, c, rows, cols) {
    if (!(r >= 1 && c >= 1 && rows >= 1 && cols >= 1) || r + rows - 1 > this.maxRows ||
        c + cols - 1 > this.maxCols)
      throw new Error('Exception: The coordinates of the range are outside the dimensions of the sheet.');
    const sheet = this;
    const world = this.world;
    const rg = {
      getRow: () => r,
      getColumn: () => c,
      getNumRows: () => rows,
      getNumColumns: () => cols,
      getLastRow: () => r + rows - 1,
      getLastColumn: () => c + cols - 1,
      getSheet: () => sheet.api(),
      getA1Notation: () => a1(r, c, rows, cols),
      getValues: () => sheet.block(r, c, rows, cols),
      getValue: () => sheet.get(r, c),
      getDisplayValues: () => sheet.block(r, c, rows, cols).map((row) => row.map(String)),
      setValues: (vals) => {
        if (!Array.isArray(vals) || vals.length !== rows || vals.some((v) => !Array.isArray(v) || v.length !== cols))
          throw new Error('Exception: The number of rows or columns in the data does not match the range.');
        vals.forEach((row, i) => row.forEach((v, j) => sheet.set(r + i, c + j, v === null ? '' : v)));
        world.log.push({ kind: 'write', sheet: sheet.name, a1: a1(r, c, rows, cols), values: plain(vals) });
        return rg;
      },
      setValue: (v) => rg.setValues([[v]]),
    };
    return rg;
  }
  api() {
    const s = this;
    return {
      getName: () => s.name,
      getSheetId: () => s.id,
      getMaxRows: () => s.maxRows,
      getMaxColumns: () => s.maxCols,
      getLastRow: () => s.lastRow(),
      getLastColumn: () => Math.max(0, ...s.cells.map((r) => r.length)),
      getRange: (r, c, rows = 1, cols = 1) => {
        if (typeof r === 'string')
          throw new Error('the fake getRange takes numbers only');
        return s.range(r, c, rows, cols);
      },
      insertColumnsAfter: (after, n) => {
        s.maxCols += n;
        s.world.log.push({ kind: 'insertColumns', after, n });
      },
      getParent: () => s.world.spreadsheetApi(),
    };
  }
}

class World {
  constructor() {
    this.now = Date.now();		// the clock of the caches (ms)
    this.id = 'ss' + crypto.randomBytes(6).toString('hex');
    this.sheets = [];
    this.active = null;		// {sheet, row, col, rows, cols}
    this.docProps = new PropertyStore();
    this.scriptProps = new PropertyStore();	// (the add-on keeps nothing there)
    this.userProps = {};		// user -> PropertyStore
    this.caches = {};		// user -> CacheStore
    this.user = null;
    this.log = [];
    this.answers = [];		// queued answers of alerts and prompts
    this.sleep = 'real';		// Utilities.sleep: 'real' waits, 'virtual' only moves the clock
    this.onSleep = null;		// called with ms at each Utilities.sleep (what happens meanwhile)
    this.loseAnswers = 0;		// the next N requests are sent, their answers lost (Timeout)
    this.lockHeld = false;		// another execution holds the document lock
    // Google runs a custom function (=SVC_VERIFY) with limited authorization:
    // getUserProperties() there "only gets the properties of the spreadsheet
    // owner" and editors cannot set user properties (Apps Script guide,
    // Custom Functions in Google Sheets, "Using Apps Script services"), and
    // Session.getActiveUser() has no email address in a custom function
    // unless the script's developer runs it (Class Session, getActiveUser).
    // owner: whose user properties (and user cache) a custom function sees;
    // formulaSeesOwner: whether the owner's own calculation shows their
    // email (the developer's case; a published add-on may not).
    // formulaSeesAll: every calculator's email shows (people of one
    // Google Workspace domain)
    this.owner = 'alice';
    this.formulaSeesOwner = true;
    this.formulaSeesAll = false;
  }

  email(user) {
    return user + '@people.example';
  }

  addSheet(name, rows = [], { maxRows = 1000, maxCols = 26 } = {}) {
    const s = new Sheet(this, 1000 + this.sheets.length, name, rows, maxRows, maxCols);
    this.sheets.push(s);
    return s;
  }

  sheet(name) {
    return this.sheets.find((s) => s.name === name);
  }

  select(name, row, col, rows = 1, cols = 1) {
    this.active = { sheet: this.sheet(name), row, col, rows, cols };
  }

  advance(seconds) {
    this.now += seconds * 1000;
  }

  // props(user): a user's properties; a new user has set the test
  // service's URL (SVC > Set service URL)
  props(user) {
    if (!this.userProps[user]) {
      this.userProps[user] = new PropertyStore();
      if (env.baseUrl)
        this.userProps[user].map.set('SVC_BASE_URL', env.baseUrl);
    }
    return this.userProps[user];
  }

  cache(user) {
    return (this.caches[user] = this.caches[user] || new CacheStore(this));
  }

  // setKey(user, key): what "Set API key" would have stored: the key and
  // who saved it
  setKey(user, k) {
    this.props(user).map.set('SVC_API_KEY', k);
    this.props(user).map.set('SVC_API_KEY_USER', this.email(user));
  }

  of(kind) {
    return this.log.filter((e) => e.kind === kind);
  }

  spreadsheetApi() {
    const w = this;
    return {
      getId: () => w.id,
      getName: () => 'Test spreadsheet',
      getSheets: () => w.sheets.map((s) => s.api()),
      getSheetByName: (n) => (w.sheet(n) ? w.sheet(n).api() : null),
      getActiveSheet: () => (w.active ? w.active.sheet : w.sheets[0]).api(),
      getActiveRange: () => w.activeRange(),
      toast: (msg, title, secs) => w.log.push({ kind: 'toast', message: String(msg), title, secs }),
    };
  }

  activeRange() {
    const a = this.active;
    return a ? a.sheet.range(a.row, a.col, a.rows, a.cols) : null;
  }

  answer(kind, args) {
    const next = this.answers.shift();
    if (next === undefined)
      throw new Error('unexpected ' + kind + ' (no answer queued): ' + JSON.stringify(args));
    return next;
  }

  ui() {
    const w = this;
    const menu = (name) => {
      const items = [];
      const b = {
        addItem: (caption, fn) => {
          items.push({ caption, fn });
          return b;
        },
        addSeparator: () => b,
        addSubMenu: () => b,
        addToUi: () => w.log.push({ kind: 'menu', name, items }),
      };
      return b;
    };
    return {
      Button, ButtonSet,
      alert: (...args) => {
        // alert(prompt) | alert(prompt, buttons) | alert(title, prompt, buttons)
        const buttons = args.length > 1 ? args[args.length - 1] : ButtonSet.OK;
        const text = args.length === 3 ? args[1] : args[0];
        w.log.push({ kind: 'alert', text: String(text), buttons });
        return buttons === ButtonSet.OK ? Button.OK : w.answer('alert', args);
      },
      prompt: (...args) => {
        const text = args.length === 3 ? args[1] : args[0];
        w.log.push({ kind: 'prompt', text: String(text) });
        const a = w.answer('prompt', args);
        return { getSelectedButton: () => a.button, getResponseText: () => a.text };
      },
      createMenu: menu,
      createAddonMenu: () => menu('add-on'),
      showSidebar: (html) => w.log.push({ kind: 'sidebar', title: html.getTitle(), content: html.getContent() }),
      showModalDialog: () => {
        throw new Error('the add-on shows no dialogs');
      },
    };
  }

  urlFetch() {
    const w = this;
    const fetchAll = (reqs) => {
      reqs = reqs.map((r) => plain(r));
      w.log.push({ kind: 'fetchAll', n: reqs.length });
      const answers = httpAll(reqs);
      let failure = null;
      const out = answers.map((a, i) => {
        const r = reqs[i];
        w.log.push({ kind: 'http', method: String(r.method || 'get').toUpperCase(), url: r.url,
                     headers: r.headers || {}, payload: r.payload === undefined ? undefined : JSON.parse(r.payload),
                     status: a.error ? 0 : a.status });
        if (a.error)
          failure = failure || 'Exception: Address unavailable: ' + r.url + ' (' + a.error.trim() + ')';
        if (w.loseAnswers > 0) {
          w.loseAnswers--;
          failure = failure || 'Exception: Timeout: ' + r.url;
        }
        if (!a.error && !r.muteHttpExceptions && a.status >= 400)
          failure = failure || 'Exception: Request failed for ' + r.url + ' returned code ' + a.status;
        return {
          getResponseCode: () => a.status,
          getContentText: () => a.body,
          getHeaders: () => Object.assign({}, a.headers),
          getAllHeaders: () => Object.assign({}, a.headers),
        };
      });
      if (failure)
        throw new Error(failure);
      return out;
    };
    return {
      fetchAll,
      fetch: (url, params = {}) => fetchAll([Object.assign({}, params, { url })])[0],
    };
  }

  utilities() {
    const w = this;
    const bytes = (buf) => [...buf].map((b) => (b > 127 ? b - 256 : b));
    const buf = (b) => Buffer.from(b.map((x) => x & 255));
    return {
      DigestAlgorithm: { MD5: 'md5', SHA_1: 'sha1', SHA_256: 'sha256', SHA_512: 'sha512' },
      Charset: { UTF_8: 'utf8', US_ASCII: 'ascii' },
      computeDigest: (alg, value) => bytes(crypto.createHash(alg).update(String(value), 'utf8').digest()),
      base64Encode: (b) => buf(b).toString('base64'),
      base64EncodeWebSafe: (b) => buf(b).toString('base64').replace(/\+/g, '-').replace(/\//g, '_'),
      getUuid: () => crypto.randomUUID(),
      sleep: (ms) => {
        w.log.push({ kind: 'sleep', ms });
        if (w.sleep === 'real')
          sleepMs(ms);
        if (w.onSleep)
          w.onSleep(ms);
        w.now += ms;
      },
    };
  }

  lockService() {
    const w = this;
    const lock = () => {
      let mine = false;
      return {
        tryLock: () => {
          if (w.lockHeld)
            return false;
          w.lockHeld = mine = true;
          return true;
        },
        waitLock: () => {
          if (w.lockHeld)
            throw new Error('Exception: Lock timeout: another process was holding the lock for too long.');
          w.lockHeld = mine = true;
        },
        hasLock: () => mine,
        releaseLock: () => {
          if (mine)
            w.lockHeld = mine = false;
        },
      };
    };
    return { getDocumentLock: lock, getScriptLock: lock, getUserLock: lock };
  }

  // load(user): a new execution of the add-on as user: its globals
  load(user = 'alice') {
    this.user = user;
    const w = this;
    let custom = false;		// inside a custom function's call
    const userProps = () => {
      if (!custom)
        return w.props(user).api();
      const owner = w.props(w.owner).api();
      if (user === w.owner)
        return owner;
      const ro = Object.assign({}, owner);
      for (const f of ['setProperty', 'setProperties', 'deleteProperty', 'deleteAllProperties'])
        ro[f] = () => {
          throw new Error('Exception: You do not have permission to call ' + f);
        };
      return ro;
    };
    const person = (email) => ({ getEmail: () => email, toString: () => email });
    const ctx = {
      console,
      SpreadsheetApp: {
        getActiveSpreadsheet: () => w.spreadsheetApi(),
        getActiveSheet: () => w.spreadsheetApi().getActiveSheet(),
        getActiveRange: () => w.activeRange(),
        getUi: () => w.ui(),
        flush: () => w.log.push({ kind: 'flush' }),
      },
      PropertiesService: {
        getUserProperties: userProps,
        getDocumentProperties: () => w.docProps.api(),
        getScriptProperties: () => w.scriptProps.api(),
      },
      CacheService: {
        getUserCache: () => w.cache(custom ? w.owner : user).api(),
        getDocumentCache: () => {
          throw new Error('the add-on caches per user');
        },
        getScriptCache: () => {
          throw new Error('the add-on caches per user');
        },
      },
      LockService: w.lockService(),
      Utilities: w.utilities(),
      UrlFetchApp: w.urlFetch(),
      HtmlService: {
        createHtmlOutputFromFile: (name) => {
          const content = fs.readFileSync(path.join(ADDON, name + '.html'), 'utf8');
          let title = '';
          const out = {
            setTitle: (t) => {
              title = t;
              return out;
            },
            getTitle: () => title,
            getContent: () => content,
          };
          return out;
        },
      },
      Session: {
        getActiveUser: () => person(!custom ? w.email(user) :
            w.formulaSeesAll || (user === w.owner && w.formulaSeesOwner) ? w.email(user) : ''),
        getEffectiveUser: () => person(custom ? '' : w.email(user)),
      },
      Logger: { log: () => {} },
    };
    vm.createContext(ctx);
    for (const f of gsFiles())
      vm.runInContext(fs.readFileSync(path.join(ADDON, f), 'utf8'), ctx, { filename: f });
    // the functions marked @customfunction run under the rules above
    for (const fn of customFunctions()) {
      const run = ctx[fn];
      ctx[fn] = function (...args) {
        const was = custom;
        custom = true;
        try {
          return run.apply(this, args);
        } finally {
          custom = was;
        }
      };
    }
    return ctx;
  }
}

// The names of the functions the .gs files mark @customfunction.
function customFunctions() {
  const names = [];
  for (const f of gsFiles()) {
    const src = fs.readFileSync(path.join(ADDON, f), 'utf8');
    for (const m of src.matchAll(/@customfunction\s*\*\/\s*function (\w+)\(/g))
      names.push(m[1]);
  }
  return names;
}

function gsFiles() {
  return fs.readdirSync(ADDON).filter((f) => f.endsWith('.gs')).sort();
}

module.exports = {
  World, env, needStack, svcadm, sql, account, key, credits, requests, verifyPosts, api, runWorker, plain, sb,
  sleepMs, gsFiles, customFunctions, ADDON, Button, ButtonSet,
};
