// The coordinator's JSON API (docs/api.md): every call goes to the page's own origin. Errors
// become ApiError with the server's own message ({"error": "..."}) or what went wrong on the way.

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function request(path, init) {
  let res;
  try {
    res = await fetch(path, { cache: 'no-store', ...init });
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    throw new ApiError(0, `cannot reach the coordinator (${err.message})`);
  }
  const text = await res.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // Not JSON: an error page from something in between, or a server without the API.
  }
  if (res.status === 401 && !String(path).startsWith('/api/v1/session')) {
    // The token behind this page's session was revoked or expired, or reads need one: the
    // router shows the log-in page.
    window.dispatchEvent(new CustomEvent('benchlab:unauthorized'));
  }
  if (!res.ok) {
    const message =
      body && typeof body.error === 'string'
        ? body.error
        : `${res.status} ${res.statusText}${text && !body ? `: ${text.slice(0, 200)}` : ''}`;
    throw new ApiError(res.status, message);
  }
  if (body === null)
    throw new ApiError(res.status, `${path}: expected JSON, got ${text.slice(0, 80) || 'nothing'}`);
  return body;
}

// Revalidated, not refetched: the campaign document carries an ETag, so while a campaign has
// not moved the browser gets 304 and hands back its copy (the other documents are no-store).
export function getJSON(path, { signal } = {}) {
  return request(path, { signal, cache: 'no-cache' });
}

// The calls that change anything: JSON only, so a page on another origin cannot send them.
export function postJSON(path, payload, method = 'POST') {
  return request(path, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(payload),
  });
}

// A query string of the set fields.
function params(query) {
  return new URLSearchParams(
    Object.entries(query).filter(([, v]) => v !== undefined && v !== null && v !== ''),
  ).toString();
}

export const api = {
  campaigns: (opts) => getJSON('/api/v1/campaigns', opts),
  campaign: (name, opts) => getJSON(`/api/v1/campaigns/${encodeURIComponent(name)}`, opts),
  reportUrl: (name, format) =>
    `/api/v1/campaigns/${encodeURIComponent(name)}/report?format=${format}`,
  series: (name, figure, opts) =>
    getJSON(
      `/api/v1/series/${encodeURIComponent(name)}?figure=${encodeURIComponent(figure)}`,
      opts,
    ),
  // A flame graph of the selected windows' profiles; query: {target, cell, window}.
  profile: (name, query, opts) =>
    getJSON(`/api/v1/campaigns/${encodeURIComponent(name)}/profile?${params(query)}`, opts),
  // Target `new` against `base` in one cell: query {base, new, cell}.
  profileDiff: (name, query, opts) =>
    getJSON(`/api/v1/campaigns/${encodeURIComponent(name)}/profile-diff?${params(query)}`, opts),
  window: (id, opts) => getJSON(`/api/v1/windows/${encodeURIComponent(id)}`, opts),
  agents: (opts) => getJSON('/api/v1/agents', opts),
  bisections: (opts) => getJSON('/api/v1/bisections', opts),
  bisection: (id, opts) => getJSON(`/api/v1/bisections/${encodeURIComponent(id)}`, opts),
  rerun: (ids) => postJSON('/api/v1/rerun', { window_ids: ids }),
  // Who this page is: {name, role, reads_open, can_rerun} (the session cookie is HttpOnly).
  session: () => request('/api/v1/session', { cache: 'no-store' }),
  logIn: (token) => postJSON('/api/v1/session', { token }),
  logOut: () => postJSON('/api/v1/session', {}, 'DELETE'),
};
