// The contract (CONTRACT.md) as one Hono app, run unchanged on Bun (bun.js) and on Node
// (node.js): only the static-file middleware and the database client differ, since each runtime
// has its own. zod validates the query, the path's id and the bodies through @hono/zod-validator.
//
// BODY_VALIDATOR (in the environment, read by node.js and bun.js) chooses how the two body
// routes (/echo, /db/orders) check their JSON and drop the keys the schema does not list:
//   zod            @hono/zod-validator, as above (the default);
//   typebox-clean  TypeBox's compiled Check, then TypeBox's Value.Clean;
//   exact-mirror   the same Check, then exact-mirror's function generated from the schema.
// The last two differ only in how the body is cleaned: docs/results/frameworks-clean.md measures
// them with CPU profiles (clean.toml).
import { zValidator } from '@hono/zod-validator';
import { Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import { createMirror } from 'exact-mirror';
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { validator } from 'hono/validator';
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

// The same two bodies as TypeBox schemas. Objects allow other keys (TypeBox's default), which
// the cleaning step then drops, as z.object does.
const bounded = (min, max) => Type.Integer({ minimum: min, maximum: max });
const echoSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 64 }),
  count: bounded(0, 1000),
  tags: Type.Array(Type.String({ minLength: 1, maxLength: 32 }), { maxItems: 8 }),
});
const orderSchema = Type.Object({
  user_id: bounded(1, 2147483647),
  item: Type.String({ minLength: 1, maxLength: 64 }),
  quantity: bounded(1, 100),
});

const CLEANERS = {
  'typebox-clean': (schema) => (value) => Value.Clean(schema, value),
  'exact-mirror': (schema) => createMirror(schema),
};

// The body validator for `schema` (TypeBox) and `zodSchema`, as BODY_VALIDATOR says.
function bodyValidator(kind, schema, zodSchema) {
  if (kind === 'zod') return zValidator('json', zodSchema, reject(INVALID_BODY));
  const check = TypeCompiler.Compile(schema);
  const clean = CLEANERS[kind](schema);
  return validator('json', (value, c) => {
    if (!check.Check(value)) return c.json(INVALID_BODY, 422, JSON_UTF8);
    return clean(value);
  });
}

// BODY_VALIDATOR's value, or an error naming the values it may take.
export function bodyValidatorKind(value) {
  const kind = value === undefined || value === '' ? 'zod' : value;
  if (kind !== 'zod' && !(kind in CLEANERS)) {
    throw new Error(`BODY_VALIDATOR: expected zod, typebox-clean or exact-mirror, got "${value}"`);
  }
  return kind;
}

// serveStatic: the runtime's own middleware (hono/bun or @hono/node-server/serve-static).
// db: null without DATABASE_URL, else the runtime's client behind two functions:
//   user(id): the row {id, name, email} of users, or undefined;
//   order(userId, item, quantity): the inserted row {user_id, item, quantity} of orders, or
//   undefined when users has no such id.
// bodyKind: bodyValidatorKind(process.env.BODY_VALIDATOR).
export function createApp(serveStatic, db, bodyKind = 'zod') {
  const app = new Hono();
  const echoValidator = bodyValidator(bodyKind, echoSchema, echoBody);
  const orderValidator = bodyValidator(bodyKind, orderSchema, orderBody);
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
  // The contract's key order, whatever order the cleaned body kept (Value.Clean keeps the
  // request's).
  app.post('/echo', echoValidator, (c) => {
    const { name, count, tags } = c.req.valid('json');
    return c.json({ name, count, tags }, 200, JSON_UTF8);
  });
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
  app.post('/db/orders', orderValidator, async (c) => {
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
