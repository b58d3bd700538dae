// The contract (CONTRACT.md) on Elysia (Bun): `t` (TypeBox) schemas validate and coerce the query
// and the body, Elysia's default normalisation drops unknown keys, @elysiajs/static serves the
// file, error hooks shape the 422 and 404 answers, and Bun's built-in SQL client serves the
// database routes. Reads PORT and DATABASE_URL; logs only its start.
import { staticPlugin } from '@elysiajs/static';
import { SQL } from 'bun';
import { Elysia, t } from 'elysia';

// Elysia says "application/json"; the contract pins the charset that Express and Fastify add.
const JSON_UTF8 = 'application/json; charset=utf-8';
const integer = (fallback) => t.Integer({ minimum: -1000000, maximum: 1000000, default: fallback });
// A JSON body's integer: not t.Integer, which also takes a numeric string ("3") in a body.
const bodyInteger = (minimum, maximum) => t.Number({ multipleOf: 1, minimum, maximum });

// 20 connections, opened as queries need them; each tagged-template query is prepared once per
// connection (Bun.sql's default) and its values are sent as parameters.
const sql = process.env.DATABASE_URL ? new SQL(process.env.DATABASE_URL, { max: 20 }) : null;

// Answers `body` with `status` (the guard below has set the content type).
const answer = (set, status, body) => {
  set.status = status;
  return body;
};

// A route's own error hook: its failed validation (or unparsable body) answers 422 with `body`.
const unprocessable = (body) => ({ code, set }) => {
  if (code !== 'VALIDATION' && code !== 'PARSE') return;
  set.status = 422;
  set.headers['content-type'] = JSON_UTF8;
  return body;
};

const app = new Elysia()
  .onError(({ code, set }) => {
    if (code !== 'NOT_FOUND') return; // the route's own hook, or Elysia's default
    set.status = 404;
    set.headers['content-type'] = JSON_UTF8;
    return { error: 'not found' };
  })
  .use(staticPlugin({ assets: new URL('../static', import.meta.url).pathname, prefix: '/static' }))
  .guard({ beforeHandle({ set }) { set.headers['content-type'] = JSON_UTF8; } }, (json) => json
    .get('/health', () => ({ status: 'ok' }))
    .get('/json', () => ({ message: 'Hello, World!', count: 3, items: ['a', 'b', 'c'], ok: true }))
    .get('/users/:id', ({ params: { id } }) => ({ id, name: `user-${id}` }))
    .get('/sum', ({ query: { a, b, c, d } }) => ({ a, b, c, d, sum: a + b + c + d }), {
      query: t.Object({ a: integer(0), b: integer(0), c: integer(10), d: integer(100) }),
      error: unprocessable({ error: 'invalid query' }),
    })
    .post('/echo', ({ body }) => body, {
      body: t.Object({
        name: t.String({ minLength: 1, maxLength: 64 }),
        // Not t.Integer, which also takes a numeric string ("3") in a body.
        count: t.Number({ multipleOf: 1, minimum: 0, maximum: 1000 }),
        tags: t.Array(t.String({ minLength: 1, maxLength: 32 }), { maxItems: 8 }),
      }),
      error: unprocessable({ error: 'invalid body' }),
    })
    // /db/users/:id: a decimal integer from 1 to 2147483647 (an int column), no sign or leading
    // zero; the pattern in the schema, the upper bound here.
    .get('/db/users/:id', async ({ params, set }) => {
      const id = Number(params.id);
      if (id > 2147483647) return answer(set, 422, { error: 'invalid id' });
      if (sql === null) return answer(set, 503, { error: 'no database' });
      let rows;
      try {
        rows = await sql`SELECT id, name, email FROM users WHERE id = ${id}`;
      } catch {
        return answer(set, 500, { error: 'database error' });
      }
      if (rows.length === 0) return answer(set, 404, { error: 'not found' });
      const { name, email } = rows[0];
      return { id: rows[0].id, name, email };
    }, {
      params: t.Object({ id: t.String({ pattern: '^[1-9][0-9]{0,9}$' }) }),
      error: unprocessable({ error: 'invalid id' }),
    })
    .post('/db/orders', async ({ body: { user_id: userId, item, quantity }, set }) => {
      if (sql === null) return answer(set, 503, { error: 'no database' });
      let rows;
      try {
        rows = await sql`INSERT INTO orders (user_id, item, quantity)
          SELECT id, ${item}, ${quantity} FROM users WHERE id = ${userId}
          RETURNING user_id, item, quantity`;
      } catch {
        return answer(set, 500, { error: 'database error' });
      }
      if (rows.length === 0) return answer(set, 422, { error: 'unknown user' });
      const row = rows[0];
      return answer(set, 201, { user_id: row.user_id, item: row.item, quantity: row.quantity });
    }, {
      body: t.Object({
        user_id: bodyInteger(1, 2147483647),
        item: t.String({ minLength: 1, maxLength: 64 }),
        quantity: bodyInteger(1, 100),
      }),
      error: unprocessable({ error: 'invalid body' }),
    }))
  .listen(Number(process.env.PORT ?? 3000));

console.log(`elysia listening on port ${app.server?.port}`);
