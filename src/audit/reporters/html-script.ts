/**
 * The HTML report's only script, inline so that the page works from a file:// URL with no server:
 * the filter box (rule id, namespace, object name) and opening the rule a `#rule.id` link names.
 * It reads the page's own data attributes and sets `hidden`/`open`; it writes no markup, so no
 * cluster text is ever parsed as HTML. The Content-Security-Policy admits it by its hash alone.
 *
 * An initial filter comes from the query (`report.html?filter=team-001`), so a link (or a test)
 * can open the page already narrowed. The outcome is recorded on <body> (data-shown-rules,
 * data-shown-objects) as well as said in words next to the box.
 */
import { createHash } from 'node:crypto';

export const SCRIPT = `(function () {
  var input = document.getElementById('filter');
  var status = document.getElementById('filter-status');
  var rules = Array.prototype.slice.call(document.querySelectorAll('details.rule'));
  var toc = Array.prototype.slice.call(document.querySelectorAll('#toc [data-rule]'));
  var total = 0;
  rules.forEach(function (d) { total += d.querySelectorAll('[data-obj]').length; });
  function has(v, q) { return (v || '').toLowerCase().indexOf(q) >= 0; }
  function apply() {
    var q = input.value.trim().toLowerCase();
    var shownRules = 0, shownObjs = 0, visible = {};
    rules.forEach(function (d) {
      var ruleHit = !q || has(d.getAttribute('data-rule'), q);
      var n = 0;
      d.querySelectorAll('[data-obj]').forEach(function (o) {
        var hit = ruleHit || has(o.getAttribute('data-ns'), q) || has(o.getAttribute('data-name'), q);
        o.hidden = !hit;
        if (hit) n++;
      });
      d.querySelectorAll('.ns').forEach(function (g) {
        g.hidden = !g.querySelector('[data-obj]:not([hidden])');
      });
      d.querySelectorAll('details.more').forEach(function (m) {
        m.hidden = !m.querySelector('[data-obj]:not([hidden])');
        m.open = !!q && !ruleHit && !m.hidden;
      });
      var show = ruleHit || n > 0;
      d.hidden = !show;
      d.open = q ? show : d.hasAttribute('data-open');
      if (show) { shownRules++; shownObjs += n; visible[d.getAttribute('data-rule')] = true; }
    });
    toc.forEach(function (li) { li.hidden = !visible[li.getAttribute('data-rule')]; });
    document.querySelectorAll('section.group').forEach(function (s) {
      s.hidden = !s.querySelector('details.rule:not([hidden])');
    });
    status.textContent = q
      ? shownRules + ' of ' + rules.length + ' rule entries, ' + shownObjs + ' of ' + total + ' objects match'
      : rules.length + ' rule entries, ' + total + ' objects';
    document.body.setAttribute('data-shown-rules', String(shownRules));
    document.body.setAttribute('data-shown-objects', String(shownObjs));
  }
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var t = id && document.getElementById(id);
    if (t && t.tagName === 'DETAILS') t.open = true;
  }
  var initial = new URLSearchParams(location.search).get('filter');
  if (initial) input.value = initial;
  input.addEventListener('input', apply);
  window.addEventListener('hashchange', openTarget);
  apply();
  openTarget();
  document.body.setAttribute('data-script', 'ran');
})();`;

/** The CSP source that admits exactly this script. */
export const SCRIPT_HASH = `'sha256-${createHash('sha256').update(SCRIPT).digest('base64')}'`;
