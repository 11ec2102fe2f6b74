// sessionpad's Node.js session (a NodeLTS pool of the local pool): one persistent
// JavaScript context per session, started by assets/python/node_session.py in
// the session's sandbox. Requests come one JSON line at a time on the file
// descriptor argv[2] ({"code", "timeoutMs"}); each answer is one JSON line on
// argv[3]:
//
//   {"done": true}                                   no value (undefined)
//   {"done": true, "text": "...", "json": ...}       the last expression's value:
//                                                    util.inspect text, and its
//                                                    JSON when it has one
//   {"error": "<stack>"}                             an uncaught exception
//
// console.log and friends write to this process's stdout and stderr, which the
// Python side reads as the cell's output. Each cell is evaluated in V8's REPL
// mode (the in-process inspector's Runtime.evaluate with replMode, as
// Chrome's console and Node's own REPL tooling use it): top-level
// let/const/class and var/function declarations persist from one request to
// the next, a cell that declares a let/const again (run twice) redeclares it,
// and `await` works at the top level. A value that is a promise is awaited.
// The cell runs in this process's main context, whose globals are Node's,
// with `require` resolving from the session's folder.
//
// Without a sandbox (SESSIONPAD_MNT_DATA names the session's folder) there is
// no /mnt/data mount: as in a Python session, paths below /mnt/data given to
// the fs module (and fs.promises) are mapped to the session's folder.
'use strict';

const fs = require('fs');
const inspector = require('inspector');
const net = require('net');
const readline = require('readline');
const util = require('util');
const { createRequire } = require('module');

const requests = Number(process.argv[2]);
const answers = Number(process.argv[3]);

function answer(msg) {
  fs.writeSync(answers, JSON.stringify(msg) + '\n');
}

// The session's folder is /mnt/data without a sandbox: paths below /mnt/data
// given to fs are mapped there (before any cell can take fs).
function mapMntData(root) {
  const prefix = '/mnt/data';
  const fix = (p) => {
    if (p instanceof URL && p.protocol === 'file:') {
      p = p.pathname;
    }
    if (typeof p === 'string' && (p === prefix || p.startsWith(prefix + '/'))) {
      return root + p.slice(prefix.length);
    }
    return p;
  };
  const one = [
    'access', 'appendFile', 'chmod', 'chown', 'createReadStream', 'createWriteStream',
    'exists', 'lchown', 'lstat', 'lutimes', 'mkdir', 'open', 'opendir', 'readdir',
    'readFile', 'readlink', 'realpath', 'rm', 'rmdir', 'stat', 'statfs', 'truncate',
    'unlink', 'utimes', 'watch', 'watchFile', 'unwatchFile', 'writeFile',
  ];
  const two = ['copyFile', 'cp', 'link', 'rename', 'symlink'];
  const wrap = (target, name, paths) => {
    const f = target[name];
    if (typeof f !== 'function') {
      return;
    }
    const mapped = function (...args) {
      for (let i = 0; i < paths && i < args.length; i++) {
        args[i] = fix(args[i]);
      }
      return f.apply(this, args);
    };
    if (f[util.promisify.custom]) {
      mapped[util.promisify.custom] = f[util.promisify.custom];
    }
    target[name] = mapped;
  };
  for (const target of [fs, fs.promises]) {
    for (const base of one) {
      wrap(target, base, 1);
      wrap(target, base + 'Sync', 1);
    }
    for (const base of two) {
      wrap(target, base, 2);
      wrap(target, base + 'Sync', 2);
    }
  }
  const chdir = process.chdir;
  process.chdir = (dir) => chdir.call(process, fix(dir));
}

if (process.env.SESSIONPAD_MNT_DATA) {
  mapMntData(process.env.SESSIONPAD_MNT_DATA);
}

// The cell's globals: Node's own, with require resolving from the session's
// folder (as in Node's REPL).
globalThis.require = createRequire(process.cwd() + '/');

const session = new inspector.Session();
session.connect();

function post(method, params) {
  return new Promise((resolve, reject) => {
    session.post(method, params, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

// The JavaScript value a remote object of the inspector stands for (the
// cell's value or what it threw): this process's own value, handed over
// through a hidden global for an object (or a symbol).
const SLOT = '__sessionpadValue';
async function valueOf(remote) {
  if (remote === undefined || remote.type === 'undefined') {
    return undefined;
  }
  if (remote.objectId !== undefined) {
    await post('Runtime.callFunctionOn', {
      objectId: remote.objectId,
      functionDeclaration: `function () { 'use strict'; globalThis.${SLOT} = this; }`,
    });
    const value = globalThis[SLOT];
    delete globalThis[SLOT];
    await post('Runtime.releaseObjectGroup', { objectGroup: 'cell' });
    return value;
  }
  if (remote.unserializableValue !== undefined) {
    const u = remote.unserializableValue;
    if (u.endsWith('n')) {
      return BigInt(u.slice(0, -1));
    }
    return { NaN, Infinity, '-Infinity': -Infinity, '-0': -0 }[u];
  }
  return remote.value;
}

function errorText(err) {
  if (err && typeof err === 'object' && typeof err.stack === 'string') {
    // The cell's frames only, not those of this program and the inspector.
    return err.stack
      .split('\n')
      .filter((line) => !/^\s+at /.test(line) || line.includes('cell.js'))
      .join('\n');
  }
  return 'Uncaught ' + util.inspect(err);
}

function describe(value) {
  if (value === undefined) {
    return { done: true };
  }
  const msg = { done: true, text: util.inspect(value) };
  if (typeof value === 'number' && !Number.isFinite(value)) {
    msg.json = String(value);
    return msg;
  }
  try {
    const s = JSON.stringify(value);
    if (s !== undefined) {
      msg.json = JSON.parse(s);
    }
  } catch (_) {
    // No JSON form (a cycle, a BigInt): the text stands alone.
  }
  return msg;
}

async function run(req) {
  const timeoutMs = Math.max(1, req.timeoutMs | 0);
  let value;
  try {
    let evaluated;
    try {
      evaluated = await post('Runtime.evaluate', {
        // Named cell.js in stacks, as the cell's frames are kept by name.
        expression: req.code + '\n//# sourceURL=cell.js',
        replMode: true,
        awaitPromise: true,
        objectGroup: 'cell',
        timeout: timeoutMs,
      });
    } catch (err) {
      // The synchronous part ran past the limit: V8 terminated it.
      if (/terminated/i.test(String(err && err.message))) {
        throw new Error(`Script execution timed out after ${timeoutMs}ms`);
      }
      throw err;
    }
    if (evaluated.exceptionDetails) {
      const thrown = evaluated.exceptionDetails.exception || evaluated.result;
      throw await valueOf(thrown);
    }
    value = await valueOf(evaluated.result);
    if (value !== null && typeof value === 'object' && typeof value.then === 'function') {
      value = await value;
    }
  } catch (err) {
    answer({ error: errorText(err) });
    return;
  }
  answer(describe(value));
}

process.on('uncaughtException', (err) => {
  process.stderr.write(errorText(err) + '\n');
});
process.on('unhandledRejection', (err) => {
  process.stderr.write('Unhandled rejection: ' + errorText(err) + '\n');
});

let queue = Promise.resolve();
// A socket, not fs.createReadStream: a pipe read by the fs thread pool would keep
// process.exit() from ending the process.
const input = new net.Socket({ fd: requests, readable: true, writable: false });
const lines = readline.createInterface({ input });
lines.on('line', (line) => {
  queue = queue.then(() => run(JSON.parse(line)));
});
lines.on('close', () => process.exit(0));
