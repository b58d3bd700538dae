// The Hono app on Bun, started the way Hono's Bun guide does it: a default export that Bun
// serves (Bun takes the port from PORT and logs its start itself).
import { serveStatic } from 'hono/bun';
import { createApp } from './app.js';

export default createApp(serveStatic);
