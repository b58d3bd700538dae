// The contract (CONTRACT.md) on Elysia (Bun): `t` (TypeBox) schemas validate and coerce the query
// and the body, Elysia's default normalisation drops unknown keys, @elysiajs/static serves the
// file, and error hooks shape the 422 and 404 answers. Reads PORT; logs only its start.
import { staticPlugin } from '@elysiajs/static';
import { Elysia, t } from 'elysia';

// Elysia says "application/json"; the contract pins the charset that Express and Fastify add.
const JSON_UTF8 = 'application/json; charset=utf-8';
const integer = (fallback) => t.Integer({ minimum: -1000000, maximum: 1000000, default: fallback });

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
    }))
  .listen(Number(process.env.PORT ?? 3000));

console.log(`elysia listening on port ${app.server?.port}`);
