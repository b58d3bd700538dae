// The Hono app on Bun, started the way Hono's Bun guide does it: a default export that Bun
// serves (Bun takes the port from PORT and logs its start itself), with Bun's built-in SQL
// client for the database routes when DATABASE_URL is set.
import { SQL } from 'bun';
import { serveStatic } from 'hono/bun';
import { bodyValidatorKind, createApp } from './app.js';

// 20 connections, opened as queries need them; each tagged-template query is prepared once per
// connection (Bun.sql's default) and its values are sent as parameters.
function bunDb(url) {
  const sql = new SQL(url, { max: 20 });
  return {
    user: async (id) => (await sql`SELECT id, name, email FROM users WHERE id = ${id}`)[0],
    order: async (userId, item, quantity) => (await sql`INSERT INTO orders (user_id, item, quantity)
      SELECT id, ${item}, ${quantity} FROM users WHERE id = ${userId}
      RETURNING user_id, item, quantity`)[0],
  };
}

const url = process.env.DATABASE_URL;
export default createApp(serveStatic, url ? bunDb(url) : null,
  bodyValidatorKind(process.env.BODY_VALIDATOR));
