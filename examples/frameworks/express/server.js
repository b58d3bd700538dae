// The contract (CONTRACT.md) on Express 5: zod validates the query and the body (the validator
// Express's community reaches for), express.json() parses, express.static serves the file, and
// error-handling middleware shapes the 422 and 404 answers. Reads PORT; logs only its start.
// Run with NODE_ENV=production, as Express's production guide says.
import express from 'express';
import { z } from 'zod';

const integer = (fallback) => z.coerce.number().int().min(-1000000).max(1000000).default(fallback);
const sumQuery = z.object({ a: integer(0), b: integer(0), c: integer(10), d: integer(100) });

// z.object drops keys it does not list.
const echoBody = z.object({
  name: z.string().min(1).max(64),
  count: z.number().int().min(0).max(1000),
  tags: z.array(z.string().min(1).max(32)).max(8),
});

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
