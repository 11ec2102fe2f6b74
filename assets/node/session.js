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
// Python side reads as the cell's output. Top-level let/const/class and
// var/function declarations persist from one request to the next (one context,
// as in the Node.js REPL); a value that is a promise is awaited.
'use strict';

const fs = require('fs');
const net = require('net');
const readline = require('readline');
const util = require('util');
const vm = require('vm');
const { createRequire } = require('module');

const requests = Number(process.argv[2]);
const answers = Number(process.argv[3]);

function answer(msg) {
  fs.writeSync(answers, JSON.stringify(msg) + '\n');
}

const sessionConsole = new console.Console({ stdout: process.stdout, stderr: process.stderr });
const context = vm.createContext({
  console: sessionConsole,
  process,
  Buffer,
  require: createRequire(process.cwd() + '/'),
  setTimeout,
  clearTimeout,
  setInterval,
  clearInterval,
  setImmediate,
  clearImmediate,
  queueMicrotask,
  structuredClone,
  URL,
  URLSearchParams,
  TextEncoder,
  TextDecoder,
  AbortController,
  fetch: globalThis.fetch,
});

function errorText(err) {
  if (err && typeof err === 'object' && typeof err.stack === 'string') {
    // The cell's frames only, not those of this program and Node's vm.
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
  let value;
  try {
    const script = new vm.Script(req.code, { filename: 'cell.js' });
    value = script.runInContext(context, {
      timeout: Math.max(1, req.timeoutMs | 0),
      displayErrors: false,
    });
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
