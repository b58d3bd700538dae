-- The tables of the database routes (CONTRACT.md, "Database routes"). seed.sh runs this file,
-- then seed.sql: both tables are dropped and made again, so every seeding starts from the same
-- state (no orders, the order ids counting from 1 again).
DROP TABLE IF EXISTS orders;
DROP TABLE IF EXISTS users;

CREATE TABLE users (
  id integer PRIMARY KEY,
  name text NOT NULL,
  email text NOT NULL
);

CREATE TABLE orders (
  id bigserial PRIMARY KEY,
  user_id integer NOT NULL REFERENCES users (id),
  item text NOT NULL,
  quantity integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
