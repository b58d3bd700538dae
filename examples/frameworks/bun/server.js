// The contract (CONTRACT.md) on Bun.serve alone: its `routes` table for the paths and path
// parameter, hand-written query parsing and body checks, Bun.file for the static file. Bun.serve
// reads PORT itself when no port is given; logs only its start.
const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8' };
const INVALID_BODY = '{"error":"invalid body"}';
const INVALID_QUERY = '{"error":"invalid query"}';
const NOT_FOUND = '{"error":"not found"}';
const STATIC_4K = Bun.file(new URL('../static/4k', import.meta.url).pathname);

const json = (body, status = 200) => new Response(body, { status, headers: JSON_HEADERS });

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
  },
  fetch: () => json(NOT_FOUND, 404),
});
console.log(`Bun.serve listening on port ${server.port}`);
