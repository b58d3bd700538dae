// The Hono app on Node through @hono/node-server, as Hono's Node.js guide does it, with a pg Pool
// for the database routes when DATABASE_URL is set.
import { serve } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import pg from 'pg';
import { bodyValidatorKind, createApp } from './app.js';

// 20 connections, opened as queries need them. Named statements: each connection prepares each
// query once, then only binds and executes it.
const USER_QUERY = 'SELECT id, name, email FROM users WHERE id = $1';
const ORDER_QUERY = 'INSERT INTO orders (user_id, item, quantity) SELECT id, $2, $3 FROM users '
  + 'WHERE id = $1 RETURNING user_id, item, quantity';
function pgDb(url) {
  const pool = new pg.Pool({ connectionString: url, max: 20 });
  // An idle connection that fails (the server restarted) leaves the pool; the next query opens
  // another. Without a listener, the pool's 'error' event would end the process.
  pool.on('error', () => {});
  return {
    user: async (id) =>
      (await pool.query({ name: 'db-user', text: USER_QUERY, values: [id] })).rows[0],
    order: async (userId, item, quantity) => (await pool.query({
      name: 'db-order', text: ORDER_QUERY, values: [userId, item, quantity],
    })).rows[0],
  };
}

const url = process.env.DATABASE_URL;
const app = createApp(serveStatic, url ? pgDb(url) : null,
  bodyValidatorKind(process.env.BODY_VALIDATOR));
serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000) }, (info) => {
  console.log(`hono on node listening on port ${info.port}`);
});
