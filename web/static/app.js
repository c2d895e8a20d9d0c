// corral web UI: the little script that makes server-rendered pages live.
// Everything works without it, only without live updates.
(function () {
  'use strict';

  // Times are rendered in UTC; show them in the reader's zone.
  function localize(root) {
    root.querySelectorAll('time[data-local]').forEach(function (t) {
      var d = new Date(t.getAttribute('datetime'));
      if (isNaN(d)) return;
      if (!t.title) t.title = t.textContent;
      var opts = { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' };
      if (t.dataset.local !== 'short') opts.year = 'numeric';
      t.textContent = d.toLocaleString(undefined, opts);
    });
  }

  // Live fragments: the server sends the new HTML of the element each
  // time it changes. An update waits while keyboard focus is inside, so
  // that nobody loses their place.
  function live(el) {
    var status = document.getElementById(el.dataset.liveStatus);
    var pending = null;
    var say = function (s) { if (status) status.textContent = s; };
    var apply = function (html) {
      if (el.contains(document.activeElement)) { pending = html; return; }
      el.innerHTML = html;
      localize(el);
      say('Live · updated ' + new Date().toLocaleTimeString());
    };
    el.addEventListener('focusout', function () {
      setTimeout(function () {
        if (pending !== null && !el.contains(document.activeElement)) { var h = pending; pending = null; apply(h); }
      }, 0);
    });
    var es = new EventSource(el.dataset.live);
    es.addEventListener('html', function (ev) { apply(ev.data); });
    es.onopen = function () { say('Live'); };
    es.onerror = function () { say('Connection lost; reconnecting…'); };
    window.addEventListener('pagehide', function () { es.close(); });
  }

  // summarize mirrors summarize in logline.go: one line for one stream
  // line of Claude Code or Codex.
  function summarize(line) {
    var l;
    try { l = JSON.parse(line); } catch (e) { return ['other', line]; }
    if (!l || typeof l !== 'object' || !l.type) return ['other', line];
    var content = (l.message && Array.isArray(l.message.content)) ? l.message.content : [];
    var compact = function (v) { if (v === undefined || v === null) return ''; var s = JSON.stringify(v); return s.length > 200 ? s.slice(0, 200) + '…' : s; };
    switch (l.type) {
      case 'system':
        return l.subtype === 'init' ? ['other', 'session started' + (l.model ? ', model ' + l.model : '')] : ['other', 'system ' + (l.subtype || '')];
      case 'assistant': case 'user': {
        var kind = 'text', parts = [];
        content.forEach(function (c) {
          if (c.type === 'text') parts.push(c.text);
          else if (c.type === 'thinking') parts.push('(thinking)');
          else if (c.type === 'tool_use') { kind = 'tool'; parts.push('→ ' + c.name + ' ' + compact(c.input)); }
          else if (c.type === 'tool_result') {
            if (c.is_error) { kind = 'error'; parts.push('← error'); } else { kind = 'tool'; parts.push('← result'); }
          }
        });
        return parts.length ? [kind, parts.join(' ')] : ['other', l.type];
      }
      case 'result':
        if (l.is_error || l.subtype !== 'success') return ['error', 'result ' + l.subtype + (l.result ? ': ' + l.result : '')];
        return ['result', 'result: ' + (l.result || '')];
      case 'item.started': case 'item.completed': case 'item.updated': {
        var it = l.item || {}, arrow = l.type === 'item.started' ? '→' : '←', st = it.status ? ' · ' + it.status : '';
        if (it.type === 'agent_message') return ['text', it.text || ''];
        if (it.type === 'reasoning') return ['other', '(thinking) ' + (it.text || '')];
        if (it.type === 'command_execution') return ['tool', arrow + ' command ' + (it.command || '') + st];
        if (it.type === 'mcp_tool_call') return ['tool', arrow + ' mcp__' + it.server + '__' + it.tool + st];
        return ['tool', arrow + ' ' + it.type + st];
      }
      case 'turn.completed': return ['result', 'turn completed'];
      case 'turn.failed': case 'error':
        return ['error', l.type + ' ' + compact(l.error) + (typeof l.message === 'string' ? l.message : '')];
    }
    return ['other', l.type + (l.subtype ? ' ' + l.subtype : '')];
  }

  var maxLogLines = 5000;

  function appendLine(log, rec) {
    var kind = '', text = rec.text;
    if (rec.stream === 'event') { var s = summarize(rec.text); kind = s[0]; text = s[1]; }
    if (text.length > 2000) text = text.slice(0, 2000) + '…';
    var line = document.createElement('span');
    line.className = 'line ' + rec.stream + (kind ? ' k-' + kind : '');
    line.dataset.seq = rec.seq;
    var st = document.createElement('span');
    st.className = 'stream';
    st.textContent = rec.stream;
    line.appendChild(st);
    line.appendChild(document.createTextNode(text));
    log.appendChild(line);
    log.appendChild(document.createTextNode('\n'));
    while (log.childElementCount > maxLogLines) { log.removeChild(log.firstChild); }
  }

  // The execution page follows the run's log over the API's event stream
  // and swaps in a fresh summary (status, facts, tool calls) as it goes.
  function follow(log) {
    var last = Number(log.dataset.after || 0);
    var liveEl = document.getElementById('log-live');
    var say = function (s) { if (liveEl) liveEl.textContent = s; };
    var timer = null;
    var refresh = function (delay) {
      if (timer) return;
      timer = setTimeout(function () {
        timer = null;
        var cur = document.getElementById('summary');
        if (!cur) return;
        fetch(cur.dataset.src, { headers: { 'Accept': 'text/html' }, credentials: 'same-origin' })
          .then(function (r) { return r.ok ? r.text() : null; })
          .then(function (html) {
            if (!html) return;
            var t = document.createElement('template');
            t.innerHTML = html.trim();
            var n = t.content.firstElementChild;
            var now = document.getElementById('summary');
            if (n && now && !now.contains(document.activeElement)) { now.replaceWith(n); localize(n); }
          })
          .catch(function () {});
      }, delay);
    };
    var es = new EventSource(log.dataset.events);
    es.addEventListener('log', function (ev) {
      var rec;
      try { rec = JSON.parse(ev.data); } catch (e) { return; }
      if (rec.seq <= last) return; // a reconnection replays from the start
      last = rec.seq;
      var atEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 40;
      appendLine(log, rec);
      if (atEnd) log.scrollTop = log.scrollHeight;
      var empty = document.getElementById('log-empty');
      if (empty) empty.remove();
      if (rec.stream !== 'stdout' && rec.stream !== 'stderr') refresh(700);
    });
    es.addEventListener('end', function () { es.close(); say('finished'); refresh(0); });
    es.onopen = function () { say('live'); };
    es.onerror = function () { if (es.readyState !== EventSource.CLOSED) say('connection lost; reconnecting…'); };
    setInterval(function () {
      var s = document.getElementById('summary');
      if (s && s.dataset.running === 'true') refresh(0);
    }, 5000);
    window.addEventListener('pagehide', function () { es.close(); });
  }

  // The agent form shows the fields of the chosen kind.
  function kindFields(form) {
    var update = function () {
      var k = form.querySelector('input[name=kind]:checked');
      form.querySelectorAll('[data-kind]').forEach(function (f) {
        f.hidden = !!k && f.dataset.kind !== k.value;
      });
    };
    form.addEventListener('change', function (e) { if (e.target.name === 'kind') update(); });
    update();
  }

  document.addEventListener('DOMContentLoaded', function () {
    localize(document);
    document.querySelectorAll('[data-live]').forEach(live);
    var log = document.getElementById('log');
    if (log && log.dataset.events) {
      log.scrollTop = log.scrollHeight;
      follow(log);
    }
    document.querySelectorAll('[data-autosubmit]').forEach(function (el) {
      el.addEventListener('change', function () { el.form.requestSubmit(); });
    });
    document.addEventListener('submit', function (e) {
      var msg = e.target.dataset && e.target.dataset.confirm;
      if (msg && !window.confirm(msg)) e.preventDefault();
    });
    // After a refused form, start at the first field to fix.
    var bad = document.querySelector('[aria-invalid="true"]');
    if (bad) bad.focus();
    var kind = document.querySelector('input[name=kind]');
    if (kind) kindFields(kind.form);
  });
})();
