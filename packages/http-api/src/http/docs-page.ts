/**
 * `GET /v1/docs`: a self-contained page (no CDN, no external script) that fetches `/v1/openapi.json` and renders the
 * operations, parameters, responses and schemas. When the server has a token, paste it in the field; it is only kept
 * in the page and sent as a bearer header to fetch the spec.
 */
export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>vlink-bag API</title>
<style>
  body { font: 15px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 980px; padding: 1rem 1.5rem; color: #1b1f24; }
  h1 { font-size: 1.5rem; margin-bottom: .2rem } h2 { margin-top: 2rem; border-bottom: 1px solid #ddd }
  code, pre { font: 13px/1.4 ui-monospace, monospace; background: #f4f5f7; border-radius: 4px }
  code { padding: 0 .25rem } pre { padding: .6rem; overflow: auto; white-space: pre-wrap }
  .op { border: 1px solid #d8dce1; border-radius: 6px; margin: .8rem 0; padding: .5rem .8rem }
  .m { display: inline-block; min-width: 3.5rem; font-weight: 700; color: #fff; border-radius: 4px; text-align: center; margin-right: .5rem }
  .get { background: #1f6feb } .ws { background: #8250df }
  table { border-collapse: collapse; width: 100%; margin: .3rem 0 } td, th { text-align: left; padding: .2rem .4rem; border-bottom: 1px solid #eee; vertical-align: top }
  #auth { margin: .8rem 0 } #auth input { width: 22rem }
  .muted { color: #57606a }
</style>
</head>
<body>
<h1 id="title">vlink-bag API</h1>
<div class="muted" id="summary">Loading <code>/v1/openapi.json</code>…</div>
<div id="auth">Token (only if the server was started with one): <input id="token" type="password" autocomplete="off"> <button id="load">Load</button></div>
<div id="ops"></div>
<h2>Schemas</h2>
<div id="schemas"></div>
<script>
const el = (tag, attrs = {}, ...kids) => { const e = document.createElement(tag); Object.assign(e, attrs); for (const k of kids) e.append(k); return e; };
const code = (t) => el('code', { textContent: t });
function typeOf(s) {
  if (!s) return '';
  if (s.$ref) return s.$ref.split('/').pop();
  if (s.enum) return s.enum.map(String).join(' | ');
  if (s.type === 'array') return typeOf(s.items) + '[]';
  if (s.anyOf || s.oneOf) return (s.anyOf || s.oneOf).map(typeOf).join(' | ');
  return Array.isArray(s.type) ? s.type.join(' | ') : (s.type || 'any');
}
function render(doc) {
  document.getElementById('title').textContent = doc.info.title + ' ' + doc.info.version;
  document.getElementById('summary').textContent = doc.info.description || '';
  const ops = document.getElementById('ops'); ops.replaceChildren();
  for (const [path, item] of Object.entries(doc.paths)) for (const [method, op] of Object.entries(item)) {
    const ws = op['x-websocket'];
    const box = el('div', { className: 'op' }, el('span', { className: 'm ' + (ws ? 'ws' : 'get'), textContent: ws ? 'WS' : method.toUpperCase() }), code(path), ' ', el('b', { textContent: op.summary || '' }));
    if (op.description) box.append(el('pre', { textContent: op.description }));
    if (op.parameters && op.parameters.length) {
      const t = el('table', {}, el('tr', {}, el('th', { textContent: 'parameter' }), el('th', { textContent: 'in' }), el('th', { textContent: 'type' }), el('th', { textContent: 'description' })));
      for (const p of op.parameters) t.append(el('tr', {}, el('td', {}, code(p.name)), el('td', { textContent: p.in }), el('td', { textContent: typeOf(p.schema) }), el('td', { textContent: p.description || (p.schema && p.schema.description) || '' })));
      box.append(t);
    }
    const t = el('table', {}, el('tr', {}, el('th', { textContent: 'status' }), el('th', { textContent: 'content' }), el('th', { textContent: 'description' })));
    for (const [status, r] of Object.entries(op.responses || {})) {
      const types = Object.entries(r.content || {}).map(([ct, c]) => ct + (c.schema ? ' → ' + typeOf(c.schema) : '')).join(', ');
      t.append(el('tr', {}, el('td', { textContent: status }), el('td', { textContent: types }), el('td', { textContent: r.description || '' })));
    }
    box.append(t);
    ops.append(box);
  }
  const schemas = document.getElementById('schemas'); schemas.replaceChildren();
  for (const [name, s] of Object.entries((doc.components && doc.components.schemas) || {})) {
    const t = el('table');
    for (const [prop, ps] of Object.entries(s.properties || {})) t.append(el('tr', {}, el('td', {}, code(prop)), el('td', { textContent: typeOf(ps) }), el('td', { textContent: ps.description || '' })));
    schemas.append(el('h3', { textContent: name }), t);
  }
}
async function load() {
  const token = document.getElementById('token').value.trim();
  const res = await fetch('/v1/openapi.json', { headers: token ? { authorization: 'Bearer ' + token } : {} });
  if (!res.ok) { document.getElementById('summary').textContent = 'Could not load the spec: HTTP ' + res.status + (res.status === 401 ? ' (enter the token)' : ''); return; }
  render(await res.json());
}
document.getElementById('load').onclick = load;
load();
</script>
</body>
</html>
`;
