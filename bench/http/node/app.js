'use strict';
// The request handler and server factory shared by node/server.js and
// node-cluster/server.js: the five workloads of bench/http/README.md on
// node:http alone.

const http = require('node:http');

const MAX_BODY = 64 * 1024; // larger request bodies get 413 and a close
const U64_MAX = (1n << 64n) - 1n;

// Every reply sets Content-Length itself, so Node never falls back to
// chunked encoding and HTTP/1.0 clients can keep the connection.
function reply(res, status, type, body, extra) {
  const headers = { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) };
  if (extra) Object.assign(headers, extra);
  res.writeHead(status, headers);
  res.end(body);
}

const text = (res, status, body, extra) => reply(res, status, 'text/plain', body, extra);
const json = (res, body) => reply(res, 200, 'application/json', body);
const notFound = (res) => text(res, 404, 'not found\n');
const notAllowed = (res, allow) => text(res, 405, 'method not allowed\n', { Allow: allow });

// The decimal digits of an unsigned 64-bit integer, canonical (no leading
// zeros), or null. BigInt because a JS number is exact only to 2^53.
function parseU64(s) {
  if (!/^[0-9]{1,20}$/.test(s)) return null;
  const n = BigInt(s);
  return n <= U64_MAX ? n.toString() : null;
}

// Binds the body to the record {name: string, age: unsigned integer,
// adult: boolean}, or returns null. Unknown fields are ignored. age must be
// a safe integer: JSON.parse turns larger ones into inexact doubles.
function parseUser(body) {
  let v;
  try {
    v = JSON.parse(body);
  } catch {
    return null;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
  const { name, age, adult } = v;
  if (typeof name !== 'string') return null;
  if (!Number.isSafeInteger(age) || age < 0) return null;
  if (typeof adult !== 'boolean') return null;
  return { name, age, adult };
}

// POST /users, or POST /minimal/users/{id} when id (the canonical digits
// from parseU64) is given.
function createUser(req, res, id) {
  if (Number(req.headers['content-length']) > MAX_BODY) {
    // Not worth reading: answer and drop the connection (Node then
    // discards the rest of the body with the socket).
    text(res, 413, 'payload too large\n', { Connection: 'close' });
    return;
  }
  const chunks = [];
  let size = 0;
  req.on('data', (chunk) => {
    size += chunk.length;
    if (size <= MAX_BODY) chunks.push(chunk);
  });
  req.on('end', () => {
    if (size > MAX_BODY) {
      text(res, 413, 'payload too large\n', { Connection: 'close' });
      return;
    }
    const user = parseUser(Buffer.concat(chunks, size).toString('utf8'));
    if (user === null) text(res, 400, 'bad request\n');
    else if (id === undefined) json(res, JSON.stringify(user));
    // The id merged into the record: JSON.stringify cannot write a BigInt,
    // so its digits go in front of the serialised record's own fields.
    else json(res, `{"id":${id},${JSON.stringify(user).slice(1)}`);
  });
}

function handle(req, res) {
  const q = req.url.indexOf('?');
  const path = q === -1 ? req.url : req.url.slice(0, q);
  const get = req.method === 'GET';

  if (path === '/') {
    if (!get) return notAllowed(res, 'GET');
    return text(res, 200, 'hello, world\n');
  }
  if (path === '/json') {
    if (!get) return notAllowed(res, 'GET');
    return json(res, JSON.stringify({ message: 'Hello, World!' }));
  }
  if (path === '/users') {
    if (req.method !== 'POST') return notAllowed(res, 'POST');
    return createUser(req, res);
  }
  if (path.startsWith('/users/')) {
    const id = parseU64(path.slice('/users/'.length));
    if (id === null) return notFound(res);
    if (!get) return notAllowed(res, 'GET');
    // JSON.stringify cannot write a BigInt; the digits are the number.
    return json(res, `{"id":${id}}`);
  }
  if (path.startsWith('/minimal/users/')) {
    const id = parseU64(path.slice('/minimal/users/'.length));
    // A bad id is an unknown path; its body is discarded as below.
    if (id === null) return notFound(res);
    if (req.method !== 'POST') return notAllowed(res, 'POST');
    return createUser(req, res, id);
  }
  // A body we never read is discarded by Node once the response ends.
  return notFound(res);
}

function createServer() {
  // noDelay: TCP_NODELAY on every accepted socket (Node's default since 18,
  // set here so it does not depend on that).
  // A malformed request gets Node's own 400 and a close, and no log line.
  return http.createServer({ noDelay: true }, handle);
}

module.exports = { createServer };
