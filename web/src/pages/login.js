// #/login : a token (benchlab token create) exchanged for a session cookie. The token goes to
// the coordinator once, in the body of POST /api/v1/session, and is not kept by the page.

import { h, replace } from '../dom.js';
import { logIn } from '../session.js';

export function loginPage(el, next) {
  document.title = 'log in · benchlab';
  const error = h('p', {
    id: 'login-error',
    class: 'alert alert-error',
    role: 'alert',
    hidden: true,
  });
  const input = h('input', {
    id: 'token',
    name: 'token',
    type: 'password',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    placeholder: 'blt_…',
    'aria-describedby': 'token-help',
  });
  const submit = h('button', { type: 'submit', id: 'login', class: 'button' }, 'Log in');
  const form = h(
    'form',
    {
      class: 'login',
      onsubmit: async (e) => {
        e.preventDefault();
        submit.disabled = true;
        error.hidden = true;
        try {
          await logIn(input.value.trim());
          input.value = '';
          window.location.hash = next && next !== '#/login' ? next : '#/';
        } catch (err) {
          error.textContent = `Not logged in: ${err.message}`;
          error.dataset.status = String(err.status ?? '');
          error.hidden = false;
          submit.disabled = false;
          input.select();
        }
      },
    },
    h('label', { for: 'token' }, 'Token'),
    input,
    h(
      'p',
      { id: 'token-help', class: 'muted' },
      'A viewer token reads; an operator token also re-runs windows. Make one on the ' +
        "coordinator's machine with ",
      h('code', null, 'benchlab token create --db FILE --role viewer'),
      '.',
    ),
    submit,
  );
  replace(el, h('h1', null, 'Log in'), form, error);
  input.focus();
  return { destroy() {} };
}
