// The contract (CONTRACT.md) as one Hono app, run unchanged on Bun (bun.js) and on Node
// (node.js): only the static-file middleware and the database client differ, since each runtime
// has its own. zod validates the query, the path's id and the bodies through @hono/zod-validator.
import { zValidator } from '@hono/zod-validator';
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { z } from 'zod';

// c.json() says "application/json"; the contract pins the charset that Express and Fastify add.
const JSON_UTF8 = { 'Content-Type': 'application/json; charset=utf-8' };
const INVALID_BODY = { error: 'invalid body' };
const INVALID_QUERY = { error: 'invalid query' };
const INVALID_ID = { error: 'invalid id' };
const NO_DATABASE = { error: 'no database' };
const DATABASE_ERROR = { error: 'database error' };

const integer = (fallback) => z.coerce.number().int().min(-1000000).max(1000000).default(fallback);
const sumQuery = z.object({ a: integer(0), b: integer(0), c: integer(10), d: integer(100) });

// z.object drops keys it does not list.
const echoBody = z.object({
  name: z.string().min(1).max(64),
  count: z.number().int().min(0).max(1000),
  tags: z.array(z.string().min(1).max(32)).max(8),
});

// /db/users/:id: a decimal integer from 1 to 2147483647 (an int column), no sign or leading zero.
const userParams = z.object({
  id: z.string().regex(/^[1-9][0-9]{0,9}$/).transform(Number).pipe(z.number().max(2147483647)),
});
const orderBody = z.object({
  user_id: z.number().int().min(1).max(2147483647),
  item: z.string().min(1).max(64),
  quantity: z.number().int().min(1).max(100),
});

const reject = (body) => (result, c) => {
  if (!result.success) return c.json(body, 422, JSON_UTF8);
};

// serveStatic: the runtime's own middleware (hono/bun or @hono/node-server/serve-static).
// db: null without DATABASE_URL, else the runtime's client behind two functions:
//   user(id): the row {id, name, email} of users, or undefined;
//   order(userId, item, quantity): the inserted row {user_id, item, quantity} of orders, or
//   undefined when users has no such id.
export function createApp(serveStatic, db) {
  const app = new Hono();
  const root = new URL('..', import.meta.url).pathname;

  app.get('/health', (c) => c.json({ status: 'ok' }, 200, JSON_UTF8));
  app.get('/json', (c) => {
    const body = { message: 'Hello, World!', count: 3, items: ['a', 'b', 'c'], ok: true };
    return c.json(body, 200, JSON_UTF8);
  });
  app.get('/users/:id', (c) => {
    const id = c.req.param('id');
    return c.json({ id, name: `user-${id}` }, 200, JSON_UTF8);
  });
  app.get('/sum', zValidator('query', sumQuery, reject(INVALID_QUERY)), (c) => {
    const q = c.req.valid('query');
    return c.json({ a: q.a, b: q.b, c: q.c, d: q.d, sum: q.a + q.b + q.c + q.d }, 200, JSON_UTF8);
  });
  app.post('/echo', zValidator('json', echoBody, reject(INVALID_BODY)), (c) =>
    c.json(c.req.valid('json'), 200, JSON_UTF8));
  app.get('/db/users/:id', zValidator('param', userParams, reject(INVALID_ID)), async (c) => {
    if (db === null) return c.json(NO_DATABASE, 503, JSON_UTF8);
    let row;
    try {
      row = await db.user(c.req.valid('param').id);
    } catch {
      return c.json(DATABASE_ERROR, 500, JSON_UTF8);
    }
    if (row === undefined) return c.json({ error: 'not found' }, 404, JSON_UTF8);
    return c.json({ id: row.id, name: row.name, email: row.email }, 200, JSON_UTF8);
  });
  app.post('/db/orders', zValidator('json', orderBody, reject(INVALID_BODY)), async (c) => {
    if (db === null) return c.json(NO_DATABASE, 503, JSON_UTF8);
    const { user_id: userId, item, quantity } = c.req.valid('json');
    let row;
    try {
      row = await db.order(userId, item, quantity);
    } catch {
      return c.json(DATABASE_ERROR, 500, JSON_UTF8);
    }
    if (row === undefined) return c.json({ error: 'unknown user' }, 422, JSON_UTF8);
    return c.json({ user_id: row.user_id, item: row.item, quantity: row.quantity }, 201,
      JSON_UTF8);
  });
  app.use('/static/*', serveStatic({ root }));

  app.notFound((c) => c.json({ error: 'not found' }, 404, JSON_UTF8));
  app.onError((err, c) => {
    // The validator throws a 400 HTTPException for a body that is not JSON.
    if (err instanceof HTTPException && err.status === 400) {
      return c.json(INVALID_BODY, 422, JSON_UTF8);
    }
    return c.json({ error: 'internal' }, 500, JSON_UTF8);
  });
  return app;
}
