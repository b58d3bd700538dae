// The contract (CONTRACT.md) on Express 5: zod validates the query and the body (the validator
// Express's community reaches for), express.json() parses, express.static serves the file, and
// error-handling middleware shapes the 422 and 404 answers; the database routes go through a pg
// Pool. Reads PORT and DATABASE_URL; logs only its start. Run with NODE_ENV=production, as
// Express's production guide says.
import express from 'express';
import pg from 'pg';
import { z } from 'zod';

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

const app = express();
app.disable('x-powered-by'); // Express's security best practices

app.get('/health', (req, res) => {
  res.json({ status: 'ok' });
});

app.get('/json', (req, res) => {
  res.json({ message: 'Hello, World!', count: 3, items: ['a', 'b', 'c'], ok: true });
});

app.get('/users/:id', (req, res) => {
  const { id } = req.params;
  res.json({ id, name: `user-${id}` });
});

app.get('/sum', (req, res) => {
  const query = sumQuery.safeParse(req.query);
  if (!query.success) return res.status(422).json({ error: 'invalid query' });
  const { a, b, c, d } = query.data;
  res.json({ a, b, c, d, sum: a + b + c + d });
});

app.post('/echo', express.json(), (req, res) => {
  const body = echoBody.safeParse(req.body);
  if (!body.success) return res.status(422).json({ error: 'invalid body' });
  res.json(body.data);
});

app.get('/db/users/:id', async (req, res) => {
  const params = userParams.safeParse(req.params);
  if (!params.success) return res.status(422).json({ error: 'invalid id' });
  if (pool === null) return res.status(503).json({ error: 'no database' });
  let rows;
  try {
    ({ rows } = await pool.query({ name: 'db-user', text: USER_QUERY, values: [params.data.id] }));
  } catch {
    return res.status(500).json({ error: 'database error' });
  }
  if (rows.length === 0) return res.status(404).json({ error: 'not found' });
  const { id, name, email } = rows[0];
  res.json({ id, name, email });
});

app.post('/db/orders', express.json(), async (req, res) => {
  const body = orderBody.safeParse(req.body);
  if (!body.success) return res.status(422).json({ error: 'invalid body' });
  if (pool === null) return res.status(503).json({ error: 'no database' });
  const { user_id: userId, item, quantity } = body.data;
  let rows;
  try {
    ({ rows } = await pool.query({
      name: 'db-order', text: ORDER_QUERY, values: [userId, item, quantity],
    }));
  } catch {
    return res.status(500).json({ error: 'database error' });
  }
  if (rows.length === 0) return res.status(422).json({ error: 'unknown user' });
  const order = rows[0];
  res.status(201).json({ user_id: order.user_id, item: order.item, quantity: order.quantity });
});

app.use('/static', express.static(new URL('../static', import.meta.url).pathname));

app.use((req, res) => {
  res.status(404).json({ error: 'not found' });
});

// express.json() passes a body that is not JSON on as a 400 error.
app.use((err, req, res, next) => {
  if (err.type === 'entity.parse.failed') return res.status(422).json({ error: 'invalid body' });
  next(err);
});

const port = Number(process.env.PORT ?? 3000);
app.listen(port, () => console.log(`express listening on port ${port}`));
