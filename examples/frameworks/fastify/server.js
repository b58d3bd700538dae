// The contract (CONTRACT.md) on Fastify 5: JSON schemas validate and coerce the query and the
// body (ajv; removeAdditional drops unknown keys), response schemas serialise the answers,
// @fastify/static serves the file, and the error and not-found handlers shape the 422 and 404
// answers; the database routes go through a pg Pool. Reads PORT and DATABASE_URL; Fastify's
// logger is off by default, so it logs only its start.
import fastifyStatic from '@fastify/static';
import Ajv from 'ajv';
import Fastify from 'fastify';
import pg from 'pg';

// One ajv per part of the request, as Fastify's validation guide shows: the query is text and
// is coerced to numbers; a JSON body already has types, so "3" stays a string and fails.
const ajv = {
  querystring: new Ajv({ coerceTypes: true, useDefaults: true, removeAdditional: true }),
  params: new Ajv({ coerceTypes: true }),
  body: new Ajv({ coerceTypes: false, removeAdditional: true }),
};

const integer = (fallback) =>
  ({ type: 'integer', minimum: -1000000, maximum: 1000000, default: fallback });
const sumQuery = {
  type: 'object',
  properties: { a: integer(0), b: integer(0), c: integer(10), d: integer(100) },
};
const sumReply = {
  type: 'object',
  properties: { a: { type: 'integer' }, b: { type: 'integer' }, c: { type: 'integer' },
    d: { type: 'integer' }, sum: { type: 'integer' } },
};
const echoBody = {
  type: 'object',
  required: ['name', 'count', 'tags'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 64 },
    count: { type: 'integer', minimum: 0, maximum: 1000 },
    tags: { type: 'array', maxItems: 8, items: { type: 'string', minLength: 1, maxLength: 32 } },
  },
};
const jsonReply = {
  type: 'object',
  properties: { message: { type: 'string' }, count: { type: 'integer' },
    items: { type: 'array', items: { type: 'string' } }, ok: { type: 'boolean' } },
};
const userReply = {
  type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } },
};
const healthReply = { type: 'object', properties: { status: { type: 'string' } } };
// /db/users/:id: a decimal integer from 1 to 2147483647 (an int column), no sign or leading zero;
// the pattern here, the upper bound in the handler.
const dbUserParams = {
  type: 'object',
  properties: { id: { type: 'string', pattern: '^[1-9][0-9]{0,9}$' } },
};
const dbUserReply = {
  type: 'object',
  properties: { id: { type: 'integer' }, name: { type: 'string' }, email: { type: 'string' } },
};
const orderBody = {
  type: 'object',
  required: ['user_id', 'item', 'quantity'],
  additionalProperties: false,
  properties: {
    user_id: { type: 'integer', minimum: 1, maximum: 2147483647 },
    item: { type: 'string', minLength: 1, maxLength: 64 },
    quantity: { type: 'integer', minimum: 1, maximum: 100 },
  },
};

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

const app = Fastify();
app.setValidatorCompiler(({ schema, httpPart }) => ajv[httpPart].compile(schema));

// Set before the routes, which take the handlers in force when they are declared.
app.setNotFoundHandler((request, reply) => {
  reply.code(404).send({ error: 'not found' });
});

app.setErrorHandler((error, request, reply) => {
  if (error.validation) {
    const what = { querystring: 'query', params: 'id' }[error.validationContext] ?? 'body';
    return reply.code(422).send({ error: `invalid ${what}` });
  }
  // The JSON content-type parser's errors (a body that is not JSON) carry FST_ERR_CTP_ codes.
  if (error.code?.startsWith('FST_ERR_CTP_')) {
    return reply.code(422).send({ error: 'invalid body' });
  }
  reply.send(error);
});

app.get('/health', { schema: { response: { 200: healthReply } } }, async () => ({ status: 'ok' }));

app.get('/json', { schema: { response: { 200: jsonReply } } },
  async () => ({ message: 'Hello, World!', count: 3, items: ['a', 'b', 'c'], ok: true }));

app.get('/users/:id', { schema: { response: { 200: userReply } } }, async (request, reply) => {
  const { id } = request.params;
  // Fastify's router also matches /users/ (an empty id), which the contract leaves to the 404.
  if (id === '') return reply.callNotFound();
  return { id, name: `user-${id}` };
});

app.get('/sum', { schema: { querystring: sumQuery, response: { 200: sumReply } } },
  async (request) => {
    const { a, b, c, d } = request.query;
    return { a, b, c, d, sum: a + b + c + d };
  });

app.post('/echo', { schema: { body: echoBody, response: { 200: echoBody } } },
  async (request) => request.body);

app.get('/db/users/:id', {
  schema: { params: dbUserParams, response: { 200: dbUserReply } },
  // As for /users/:id, the empty id of /db/users/ is the 404's, before the schema calls it invalid.
  preValidation: (request, reply, done) => {
    if (request.params.id === '') reply.callNotFound();
    else done();
  },
}, async (request, reply) => {
  const id = Number(request.params.id);
  if (id > 2147483647) return reply.code(422).send({ error: 'invalid id' });
  if (pool === null) return reply.code(503).send({ error: 'no database' });
  let rows;
  try {
    ({ rows } = await pool.query({ name: 'db-user', text: USER_QUERY, values: [id] }));
  } catch {
    return reply.code(500).send({ error: 'database error' });
  }
  if (rows.length === 0) return reply.code(404).send({ error: 'not found' });
  return rows[0];
});

app.post('/db/orders', { schema: { body: orderBody, response: { 201: orderBody } } },
  async (request, reply) => {
    if (pool === null) return reply.code(503).send({ error: 'no database' });
    const { user_id: userId, item, quantity } = request.body;
    let rows;
    try {
      ({ rows } = await pool.query({
        name: 'db-order', text: ORDER_QUERY, values: [userId, item, quantity],
      }));
    } catch {
      return reply.code(500).send({ error: 'database error' });
    }
    if (rows.length === 0) return reply.code(422).send({ error: 'unknown user' });
    return reply.code(201).send(rows[0]);
  });

await app.register(fastifyStatic, {
  root: new URL('../static', import.meta.url).pathname,
  prefix: '/static/',
});

const address = await app.listen({ port: Number(process.env.PORT ?? 3000), host: '0.0.0.0' });
console.log(`fastify listening at ${address}`);
