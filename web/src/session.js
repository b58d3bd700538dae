// Who the page is (docs/security.md, "The dashboard"): the coordinator's answer to
// GET /api/v1/session, kept here for the pages that show or hide what a role may do. The
// session itself is an HttpOnly cookie the page never sees; a token typed into the log-in page
// is sent once and not kept.

import { api, ApiError } from './api.js';

let current = { name: null, role: null, reads_open: false, can_rerun: false, known: false };
const listeners = new Set();

export function session() {
  return current;
}

export function onSessionChange(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

function set(next) {
  current = { ...next, known: true };
  for (const fn of listeners) fn(current);
}

// Asks the coordinator; a 401 (a cookie whose session ended) is an anonymous page.
export async function refreshSession() {
  try {
    set(await api.session());
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 401) throw err;
    set({ name: null, role: null, reads_open: false, can_rerun: false });
  }
  return current;
}

// True when the page must log in before it can show anything.
export function needsLogIn() {
  return current.known && !current.role && !current.reads_open;
}

export async function logIn(token) {
  set(await api.logIn(token));
  return current;
}

export async function logOut() {
  await api.logOut();
  return refreshSession();
}
