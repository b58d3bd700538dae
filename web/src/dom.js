// Building the page's elements without a framework: h() makes an element from a tag, its
// attributes and its children; the pages build their whole view with it and replace it at once.

// h('a', {href: '#/', class: 'x', dataset: {windowId: 3}, onclick: fn}, 'text', child, [more])
// Attribute values null, undefined or false are left out; children null/false are skipped.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === null || value === undefined || value === false) continue;
      if (key === 'class')
        el.className = Array.isArray(value) ? value.filter(Boolean).join(' ') : value;
      else if (key === 'dataset')
        for (const [k, v] of Object.entries(value)) {
          if (v !== null && v !== undefined) el.dataset[k] = String(v);
        }
      else if (key === 'style' && typeof value === 'object') Object.assign(el.style, value);
      else if (key.startsWith('on') && typeof value === 'function')
        el.addEventListener(key.slice(2), value);
      else if (key === 'text') el.textContent = value;
      else el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(String(child)));
  }
}

// Replaces everything in `el` with `children`.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

// A table from column definitions: [{label, cls, get(row) -> node|text}], rows, options.
export function table(columns, rows, { id, cls, rowAttrs, caption } = {}) {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { id, class: ['data', cls] },
      caption ? h('caption', null, caption) : null,
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          columns.map((c) => h('th', { class: c.cls, scope: 'col', title: c.title }, c.label)),
        ),
      ),
      h(
        'tbody',
        null,
        rows.map((row) =>
          h(
            'tr',
            rowAttrs ? rowAttrs(row) : null,
            columns.map((c) => h('td', { class: c.cls }, c.get(row))),
          ),
        ),
      ),
    ),
  );
}

// A verdict or state as a coloured badge with its word (colour is never the only signal).
export function badge(word, kind = word) {
  return h(
    'span',
    { class: `badge badge-${String(kind).replace(/[^a-z0-9-]/gi, '')}`, dataset: { badge: word } },
    word,
  );
}
