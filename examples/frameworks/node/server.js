// The contract (CONTRACT.md) on node:http alone: hand-written routing, query parsing and body
// checks, the way a small service without a framework is written; the database routes through a
// pg Pool. Reads PORT and DATABASE_URL; logs only its start.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const STATIC_4K = fileURLToPath(new URL('../static/4k', import.meta.url));
const JSON_TYPE = 'application/json; charset=utf-8';
const INVALID_BODY = '{"error":"invalid body"}';
const INVALID_QUERY = '{"error":"invalid query"}';
const NOT_FOUND = '{"error":"not found"}';
const INVALID_ID = '{"error":"invalid id"}';
const UNKNOWN_USER = '{"error":"unknown user"}';
const NO_DATABASE = '{"error":"no database"}';
const DATABASE_ERROR = '{"error":"database error"}';
const MAX_BODY_BYTES = 1024 * 1024;

// 20 connections, opened as queries need them. Named statements: each connection prepares each
// query once, then only binds and executes it.
const pool = process.env.DATABASE_URL
  ? new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 })
  : null;
// An idle connection that fails (the server restarted) leaves the pool; the next query opens
// another. Without a listener, the pool's 'error' event would end the process.
pool?.on('error', () => {});
const USER_QUERY = 'SELECT id, name, email FROM users WHERE id = $1';
const ORDER_QUERY = 'INSERT INTO orders (user_id, item, quantity) SELECT id, $2, $3 FROM users '
  + 'WHERE id = $1 RETURNING user_id, item, quantity';

function send(res, status, body) {
  res.writeHead(status, { 'Content-Type': JSON_TYPE, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

// /sum: a, b, c, d are optional decimal integers from -1000000 to 1000000.
const SUM_DEFAULTS = { a: 0, b: 0, c: 10, d: 100 };
function parseSum(search) {
  const params = new URLSearchParams(search);
  const out = {};
  for (const [key, fallback] of Object.entries(SUM_DEFAULTS)) {
    const raw = params.get(key);
    if (raw === null) {
      out[key] = fallback;
      continue;
    }
    if (!/^-?[0-9]+$/.test(raw)) return null;
    const value = Number(raw);
    if (value < -1000000 || value > 1000000) return null;
    out[key] = value;
  }
  out.sum = out.a + out.b + out.c + out.d;
  return out;
}

// /echo: {name: 1-64 chars, count: integer 0-1000, tags: at most 8 strings of 1-32 chars};
// any other key is dropped.
const isShortString = (v, max) => typeof v === 'string' && v.length >= 1 && v.length <= max;
function checkEcho(body) {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  const { name, count, tags } = body;
  if (!isShortString(name, 64)) return null;
  if (!Number.isInteger(count) || count < 0 || count > 1000) return null;
  if (!Array.isArray(tags) || tags.length > 8) return null;
  if (!tags.every((tag) => isShortString(tag, 32))) return null;
  return { name, count, tags };
}

// /db/users/:id: a decimal integer from 1 to 2147483647 (an int column), no sign or leading zero.
function parseId(segment) {
  if (!/^[1-9][0-9]{0,9}$/.test(segment)) return null;
  const id = Number(segment);
  return id <= 2147483647 ? id : null;
}

// /db/orders: {user_id: integer 1-2147483647, item: 1-64 chars, quantity: integer 1-100}; any
// other key is dropped.
const isInteger = (v, min, max) => Number.isInteger(v) && v >= min && v <= max;
function checkOrder(body) {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  const { user_id: userId, item, quantity } = body;
  if (!isInteger(userId, 1, 2147483647)) return null;
  if (!isShortString(item, 64)) return null;
  if (!isInteger(quantity, 1, 100)) return null;
  return { userId, item, quantity };
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('body too large'));
        req.destroy();
      } else {
        chunks.push(chunk);
      }
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

async function echo(req, res) {
  let body;
  try {
    body = checkEcho(JSON.parse(await readBody(req)));
  } catch {
    body = null;
  }
  if (body === null) return send(res, 422, INVALID_BODY);
  send(res, 200, JSON.stringify(body));
}

async function dbUser(res, segment) {
  const id = parseId(segment);
  if (id === null) return send(res, 422, INVALID_ID);
  if (pool === null) return send(res, 503, NO_DATABASE);
  let rows;
  try {
    ({ rows } = await pool.query({ name: 'db-user', text: USER_QUERY, values: [id] }));
  } catch {
    return send(res, 500, DATABASE_ERROR);
  }
  if (rows.length === 0) return send(res, 404, NOT_FOUND);
  const { name, email } = rows[0];
  send(res, 200, JSON.stringify({ id: rows[0].id, name, email }));
}

async function dbOrder(req, res) {
  let order;
  try {
    order = checkOrder(JSON.parse(await readBody(req)));
  } catch {
    order = null;
  }
  if (order === null) return send(res, 422, INVALID_BODY);
  if (pool === null) return send(res, 503, NO_DATABASE);
  let rows;
  try {
    ({ rows } = await pool.query({
      name: 'db-order', text: ORDER_QUERY, values: [order.userId, order.item, order.quantity],
    }));
  } catch {
    return send(res, 500, DATABASE_ERROR);
  }
  if (rows.length === 0) return send(res, 422, UNKNOWN_USER);
  const { item, quantity } = rows[0];
  send(res, 201, JSON.stringify({ user_id: rows[0].user_id, item, quantity }));
}

async function static4k(res) {
  const { size } = await stat(STATIC_4K);
  res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': size });
  createReadStream(STATIC_4K).pipe(res);
}

async function route(req, res) {
  const q = req.url.indexOf('?');
  const path = q === -1 ? req.url : req.url.slice(0, q);
  if (req.method === 'GET') {
    if (path === '/health') return send(res, 200, '{"status":"ok"}');
    if (path === '/json') {
      const body = { message: 'Hello, World!', count: 3, items: ['a', 'b', 'c'], ok: true };
      return send(res, 200, JSON.stringify(body));
    }
    if (path.startsWith('/users/')) {
      const segment = path.slice('/users/'.length);
      if (segment !== '' && !segment.includes('/')) {
        const id = decodeURIComponent(segment);
        return send(res, 200, JSON.stringify({ id, name: `user-${id}` }));
      }
    }
    if (path === '/sum') {
      const sum = parseSum(q === -1 ? '' : req.url.slice(q + 1));
      return sum === null ? send(res, 422, INVALID_QUERY) : send(res, 200, JSON.stringify(sum));
    }
    if (path === '/static/4k') return static4k(res);
    if (path.startsWith('/db/users/')) {
      const segment = path.slice('/db/users/'.length);
      if (segment !== '' && !segment.includes('/')) return dbUser(res, segment);
    }
  } else if (req.method === 'POST' && path === '/echo') {
    return echo(req, res);
  } else if (req.method === 'POST' && path === '/db/orders') {
    return dbOrder(req, res);
  }
  send(res, 404, NOT_FOUND);
}

const port = Number(process.env.PORT ?? 3000);
createServer((req, res) => {
  route(req, res).catch(() => {
    if (!res.headersSent) send(res, 500, '{"error":"internal"}');
    else res.destroy();
  });
}).listen(port, () => console.log(`node:http listening on port ${port}`));
