// The Hono app on Node through @hono/node-server, as Hono's Node.js guide does it.
import { serve } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import { createApp } from './app.js';

const app = createApp(serveStatic);
serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000) }, (info) => {
  console.log(`hono on node listening on port ${info.port}`);
});
