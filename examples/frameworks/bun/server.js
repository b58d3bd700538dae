// The contract (CONTRACT.md) on Bun.serve alone: its `routes` table for the paths and path
// parameter, hand-written query parsing and body checks, Bun.file for the static file, Bun's
// built-in SQL client for the database routes. Bun.serve reads PORT itself when no port is
// given; DATABASE_URL is read here. Logs only its start.
import { SQL } from 'bun';

const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8' };
const INVALID_BODY = '{"error":"invalid body"}';
const INVALID_QUERY = '{"error":"invalid query"}';
const NOT_FOUND = '{"error":"not found"}';
const INVALID_ID = '{"error":"invalid id"}';
const UNKNOWN_USER = '{"error":"unknown user"}';
const NO_DATABASE = '{"error":"no database"}';
const DATABASE_ERROR = '{"error":"database error"}';
const STATIC_4K = Bun.file(new URL('../static/4k', import.meta.url).pathname);

const json = (body, status = 200) => new Response(body, { status, headers: JSON_HEADERS });

// 20 connections, opened as queries need them; each tagged-template query is prepared once per
// connection (Bun.sql's default) and its values are sent as parameters.
const sql = process.env.DATABASE_URL ? new SQL(process.env.DATABASE_URL, { max: 20 }) : null;

// /sum: a, b, c, d are optional decimal integers from -1000000 to 1000000.
const SUM_DEFAULTS = { a: 0, b: 0, c: 10, d: 100 };
function parseSum(params) {
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

const server = Bun.serve({
  routes: {
    '/health': { GET: () => json('{"status":"ok"}') },
    '/json': {
      GET: () => Response.json(
        { message: 'Hello, World!', count: 3, items: ['a', 'b', 'c'], ok: true },
        { headers: JSON_HEADERS },
      ),
    },
    '/users/:id': {
      GET: (req) => Response.json(
        { id: req.params.id, name: `user-${req.params.id}` },
        { headers: JSON_HEADERS },
      ),
    },
    '/sum': {
      GET: (req) => {
        const sum = parseSum(new URL(req.url).searchParams);
        if (sum === null) return json(INVALID_QUERY, 422);
        return Response.json(sum, { headers: JSON_HEADERS });
      },
    },
    '/echo': {
      POST: async (req) => {
        let body;
        try {
          body = checkEcho(await req.json());
        } catch {
          body = null;
        }
        if (body === null) return json(INVALID_BODY, 422);
        return Response.json(body, { headers: JSON_HEADERS });
      },
    },
    '/static/4k': { GET: () => new Response(STATIC_4K) },
    '/db/users/:id': {
      GET: async (req) => {
        const id = parseId(req.params.id);
        if (id === null) return json(INVALID_ID, 422);
        if (sql === null) return json(NO_DATABASE, 503);
        let rows;
        try {
          rows = await sql`SELECT id, name, email FROM users WHERE id = ${id}`;
        } catch {
          return json(DATABASE_ERROR, 500);
        }
        if (rows.length === 0) return json(NOT_FOUND, 404);
        const { name, email } = rows[0];
        return Response.json({ id: rows[0].id, name, email }, { headers: JSON_HEADERS });
      },
    },
    '/db/orders': {
      POST: async (req) => {
        let order;
        try {
          order = checkOrder(await req.json());
        } catch {
          order = null;
        }
        if (order === null) return json(INVALID_BODY, 422);
        if (sql === null) return json(NO_DATABASE, 503);
        const { userId, item, quantity } = order;
        let rows;
        try {
          rows = await sql`INSERT INTO orders (user_id, item, quantity)
            SELECT id, ${item}, ${quantity} FROM users WHERE id = ${userId}
            RETURNING user_id, item, quantity`;
        } catch {
          return json(DATABASE_ERROR, 500);
        }
        if (rows.length === 0) return json(UNKNOWN_USER, 422);
        return Response.json(
          { user_id: rows[0].user_id, item: rows[0].item, quantity: rows[0].quantity },
          { status: 201, headers: JSON_HEADERS },
        );
      },
    },
  },
  fetch: () => json(NOT_FOUND, 404),
});
console.log(`Bun.serve listening on port ${server.port}`);
