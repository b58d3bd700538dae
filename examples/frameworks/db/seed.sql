-- The rows of the database routes (CONTRACT.md, "Database routes"), after schema.sql: users 1 to
-- 10000, user i being ('user-i', 'user-i@example.com'), and no orders.
INSERT INTO users (id, name, email)
SELECT i, 'user-' || i, 'user-' || i || '@example.com'
FROM generate_series(1, 10000) AS i;

-- orders only grows during a campaign; autovacuum's vacuums of a table that only takes inserts
-- would be background work landing in some windows and not others.
ALTER TABLE orders SET (autovacuum_enabled = false);

-- Statistics for the planner, and the users' rows frozen and their hint bits set now, so that
-- the first windows do not write them back while reading them.
VACUUM (FREEZE, ANALYZE) users;
ANALYZE orders;
