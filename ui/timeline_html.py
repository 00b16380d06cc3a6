"""`s08 inspect ID --html FILE`: a session's timeline as one self-contained HTML page.

    timeline_html(timeline, details) -> str

No network and no library: the styles and the small script are inline, the chart is an SVG drawn
here — the context in tokens at each model request, the limit as a dashed line, a marker for each
compaction labelled by its layer, and the cumulative cost on a second scale; under the main line, a
lane per sub-agent (task tool) at the request whose tool call started it, with its own requests, peak
context, compactions, cost and how it ended (and a table of them). Below it, every
compaction as a <details>: its trigger and sizes, the summary that replaced the history, and the
messages its transcript saved, rendered as a conversation.

Everything from the logs is untrusted (a prompt injection can put `</script><script>…` in a
message): each value is html.escape'd where it is written, and no log text ever goes inside the
<script> element — the script reads the numbers from data- attributes. The page's Content-Security-
Policy allows only that one script (by its hash) and no network at all.
"""

from __future__ import annotations

import base64
import hashlib
import json
from html import escape

from messages import blocks
from .sanitize import safe_line

W, H = 960, 340                  # the chart's size in SVG units (without the sub-agents' lanes)
LANE = 20                        # one sub-agent's lane
LANES = 60                       # lanes drawn (the table lists them all)
LEFT, RIGHT, TOP, BOTTOM = 64, 70, 24, 44
TEXT_CHARS = 4_000               # of one text block or tool result shown
EVENT_CHARS = 200_000            # of one event's messages shown in all
LAYER_COLORS = {"snip_compact": "#d97706", "tool_result_budget": "#0891b2", "micro_compact": "#7c3aed",
                "compacted": "#dc2626", "reactive_compact": "#be123c", "fallback": "#92400e",
                "saved_output": "#0e7490"}
SHORT = {"snip_compact": "snip", "tool_result_budget": "budget", "micro_compact": "micro", "compacted": "summary",
         "reactive_compact": "reactive", "fallback": "fallback", "saved_output": "output"}

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;max-width:1000px;color:#1f2937;
background:#fff}
h1{font-size:20px;margin:0 0 4px} .meta{color:#6b7280;margin:0 0 12px}
svg{background:#f9fafb;border:1px solid #e5e7eb;border-radius:6px;width:100%;height:auto}
.axis text,.tick{font-size:11px;fill:#6b7280} .grid{stroke:#e5e7eb}
.context{fill:none;stroke:#2563eb;stroke-width:2} .point{fill:#2563eb} .point.summary{fill:#db2777}
.limit{stroke:#dc2626;stroke-dasharray:6 4;stroke-width:1.5} .cost{fill:none;stroke:#059669;stroke-width:1.5}
.marker line{stroke-width:1.5;stroke-dasharray:2 2} .marker text{font-size:10px} .marker{cursor:pointer}
.legend{font-size:12px;fill:#374151}
.lane rect{fill:#bfdbfe;stroke:#2563eb} .lane.bad rect{fill:#fde68a;stroke:#b45309} .lane text{font-size:11px;fill:#1e3a8a}
.lane line{stroke:#93c5fd;stroke-dasharray:2 3}
#readout{min-height:1.4em;color:#374151;font-variant-numeric:tabular-nums}
details{border:1px solid #e5e7eb;border-radius:6px;margin:8px 0;padding:6px 10px}
details[open]{background:#fcfcfd} summary{cursor:pointer;font-weight:600}
.layer{display:inline-block;border-radius:4px;padding:0 6px;color:#fff;font-size:12px;margin-right:6px}
.msg{border-left:3px solid #d1d5db;margin:6px 0;padding:2px 8px} .msg.user{border-color:#2563eb}
.msg.assistant{border-color:#059669} .role{font-size:11px;color:#6b7280;text-transform:uppercase}
pre{white-space:pre-wrap;word-break:break-word;margin:2px 0;font:12px/1.4 ui-monospace,Menlo,monospace}
.tool{color:#0e7490} .err{color:#b91c1c} table{border-collapse:collapse;font-size:12px}
td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #f3f4f6} th{color:#6b7280}
.note{color:#6b7280;font-size:12px}
"""

SCRIPT = """
(function(){
  var svg=document.getElementById('chart'); if(!svg) return;
  var out=document.getElementById('readout');
  var pts=svg.querySelectorAll('.point'), peak=0;
  pts.forEach(function(p){
    var t=+p.getAttribute('data-tokens'); if(t>peak) peak=t;
    p.addEventListener('mouseenter',function(){
      out.textContent='request '+p.getAttribute('data-n')+': '+t.toLocaleString()+' tokens, cache hit '+
        p.getAttribute('data-hit')+', cost so far '+p.getAttribute('data-total');
    });
  });
  svg.querySelectorAll('.marker').forEach(function(m){
    m.addEventListener('click',function(){
      var d=document.getElementById('event-'+m.getAttribute('data-event'));
      if(d){d.open=true; d.scrollIntoView({behavior:'smooth'});}
    });
  });
  var limit=+svg.getAttribute('data-limit');
  document.getElementById('stats').textContent=pts.length+' requests \\u00b7 peak '+peak.toLocaleString()+
    ' tokens ('+(limit?Math.round(100*peak/limit):0)+'% of the limit) \\u00b7 '+
    svg.querySelectorAll('.marker').length+' compaction events';
  svg.setAttribute('data-rendered','1');
})();
"""


def _e(value) -> str:
    return escape(value if isinstance(value, str) else str(value), quote=True)


def _money(value) -> str:
    return "?" if value is None else f"${value:,.4f}"


def _clip(text: str, most: int = TEXT_CHARS) -> str:
    return text if len(text) <= most else f"{text[:most]}\n… [{len(text) - most:,} more characters]"


def _thousands(v: float) -> str:
    return f"{v / 1000:,.0f}k" if v >= 20_000 or v == 0 else f"{v / 1000:,.1f}k"


def chart(t) -> str:
    """The SVG: context per request, the limit, compaction markers, the cumulative cost."""
    rows, events = t.requests, t.events
    count = max(1, len(rows))
    top = max([t.limit] + [r.context for r in rows]) * 1.08 or 1
    cost_top = max([r.total or 0 for r in rows] + [0]) or 1.0
    plot_w, plot_h = W - LEFT - RIGHT, H - TOP - BOTTOM

    def x(n: float) -> float:
        return LEFT + (n - 0.5) * plot_w / count

    def y(tokens: float) -> float:
        return TOP + plot_h * (1 - tokens / top)

    lanes = t.children[:LANES]
    parts = [f'<svg id="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H + LANE * len(lanes)}" role="img" '
             f'aria-label="context tokens per request" data-limit="{t.limit}" data-requests="{len(rows)}">']
    for k in range(5):
        v = top * k / 4
        parts.append(f'<line class="grid" x1="{LEFT}" x2="{W - RIGHT}" y1="{y(v):.1f}" y2="{y(v):.1f}"/>'
                     f'<text class="tick" x="{LEFT - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{_thousands(v)}</text>')
        parts.append(f'<text class="tick" x="{W - RIGHT + 6}" y="{TOP + plot_h * (1 - k / 4) + 4:.1f}">'
                     f'${cost_top * k / 4:,.3f}</text>')
    parts.append(f'<text class="tick" x="{LEFT}" y="{H - 8}">request →</text>')
    parts.append(f'<line id="limit" class="limit" x1="{LEFT}" x2="{W - RIGHT}" y1="{y(t.limit):.1f}" '
                 f'y2="{y(t.limit):.1f}"/><text class="legend" x="{W - RIGHT - 4}" y="{y(t.limit) - 5:.1f}" '
                 f'text-anchor="end" fill="#dc2626">limit {t.limit:,}</text>')
    for e in events:
        pos = LEFT + e.after * plot_w / count if rows else LEFT
        color = LAYER_COLORS.get(e.layer, "#6b7280")
        label = SHORT.get(e.layer, e.layer)
        tip = f"{e.n}: {e.layer}" + (f" — {e.trigger}" if e.trigger else "") + (
            f" — {e.before:,} → {e.after_tokens:,} tokens" if e.before is not None and e.after_tokens is not None else "")
        parts.append(f'<g class="marker" data-event="{e.n}" data-layer="{_e(e.layer)}"><title>{_e(tip)}</title>'
                     f'<line x1="{pos:.1f}" x2="{pos:.1f}" y1="{TOP}" y2="{TOP + plot_h}" stroke="{color}"/>'
                     f'<text x="{pos + 2:.1f}" y="{TOP + 10 + (e.n % 4) * 11}" fill="{color}">{_e(label)}</text></g>')
    if rows:
        line = " ".join(f"{x(r.n):.1f},{y(r.context):.1f}" for r in rows)
        parts.append(f'<polyline id="context" class="context" points="{line}"/>')
        costs = " ".join(f"{x(r.n):.1f},{TOP + plot_h * (1 - (r.total or 0) / cost_top):.1f}" for r in rows)
        parts.append(f'<polyline id="cost" class="cost" points="{costs}"/>')
        for r in rows:
            hit = f"{r.hit:.0%}" if r.hit is not None else "–"
            parts.append(f'<circle class="point{" summary" if r.purpose == "summary" else ""}" cx="{x(r.n):.1f}" '
                         f'cy="{y(r.context):.1f}" r="{3 if count < 80 else 2}" data-n="{r.n}" '
                         f'data-tokens="{r.context}" data-hit="{hit}" data-total="{_e(_money(r.total))}">'
                         f'<title>request {r.n}: {r.context:,} tokens, cache hit {hit}, {_e(_money(r.cost))}'
                         f'</title></circle>')
    parts.append(f'<g class="legend"><line x1="{LEFT + 8}" x2="{LEFT + 28}" y1="{H - 22}" y2="{H - 22}" '
                 f'class="context"/><text x="{LEFT + 32}" y="{H - 18}">context tokens</text>'
                 f'<line x1="{LEFT + 150}" x2="{LEFT + 170}" y1="{H - 22}" y2="{H - 22}" class="cost"/>'
                 f'<text x="{LEFT + 174}" y="{H - 18}">cumulative cost (right scale)</text>'
                 f'<line x1="{LEFT + 370}" x2="{LEFT + 390}" y1="{H - 22}" y2="{H - 22}" class="limit"/>'
                 f'<text x="{LEFT + 394}" y="{H - 18}">CONTEXT_LIMIT</text></g>')
    for i, c in enumerate(lanes):
        parts.append(_lane(c, LEFT + c.after * plot_w / count if rows else LEFT, H + i * LANE, plot_w / count))
    parts.append("</svg>")
    return "".join(parts)


def _child_text(c) -> str:
    def count(v, one):
        return "?" if v is None else f"{v:,} {one}{'' if v == 1 else 's'}"
    return (f"task {c.n} {safe_line(c.agent or '?')}: {safe_line(c.description)} · {count(c.requests, 'request')} · peak "
            f"{'?' if c.peak is None else f'{c.peak:,}'} tokens · {count(c.compactions, 'compaction')} · "
            f"{_money(c.cost)} · {c.status}{'' if c.reported else ' (no report: the session stopped)'}")


def _lane(c, pos: float, top: float, step: float) -> str:
    """One sub-agent: a bar where its task call was, its summary beside it (left of it near the right edge)."""
    width = max(6.0, min(step, 40.0))
    text = _child_text(c)
    right = pos + width + 4 + len(text) * 5.6 <= W
    at, anchor = (pos + width + 4, "start") if right else (pos - 4, "end")
    bad = "" if c.status == "done" else " bad"
    return (f'<g class="lane{bad}" data-task="{c.n}" data-after="{c.after}" data-status="{_e(safe_line(c.status))}">'
            f'<title>{_e(text)}{_e(" — " + safe_line(c.transcript)) if c.transcript else ""}</title>'
            f'<line x1="{pos:.1f}" x2="{pos:.1f}" y1="{TOP}" y2="{top + 4:.1f}"/>'
            f'<rect x="{pos:.1f}" y="{top + 4:.1f}" width="{width:.1f}" height="{LANE - 8}" rx="3"/>'
            f'<text x="{at:.1f}" y="{top + LANE - 6:.1f}" text-anchor="{anchor}">{_e(text)}</text></g>')


def _children(t) -> str:
    if not t.children:
        return ""
    rows = "".join(f"<tr><td>{c.n}</td><td>{c.after}</td><td>{_e(safe_line(c.agent))}</td><td>{_e(safe_line(c.description))}</td>"
                   f"<td>{'?' if c.requests is None else c.requests}</td>"
                   f"<td>{'?' if c.peak is None else f'{c.peak:,}'}</td>"
                   f"<td>{'?' if c.compactions is None else c.compactions}</td><td>{_e(_money(c.cost))}</td>"
                   f"<td>{'?' if c.seconds is None else f'{c.seconds:,.1f}'}</td><td>{_e(safe_line(c.status))}"
                   f"{'' if c.reported else ' (no report)'}</td><td>{_e(safe_line(c.transcript))}</td></tr>" for c in t.children)
    return ("<h2>Sub-agents</h2><p class=\"note\">each ran in a context of its own, started by the tool call of the "
            "request shown; its transcript holds its steps</p><table id=\"children\"><tr><th>task</th><th>after "
            "request</th><th>agent</th><th>description</th><th>requests</th><th>peak</th><th>compactions</th>"
            f"<th>cost</th><th>seconds</th><th>ended</th><th>transcript</th></tr>{rows}</table>")


def _message(message: dict, budget: list[int]) -> str:
    role = message.get("role") if isinstance(message, dict) else ""
    out = [f'<div class="msg {_e(role) if role in ("user", "assistant") else ""}"><div class="role">{_e(role)}</div>']
    for b in blocks(message) if isinstance(message, dict) else []:
        if budget[0] <= 0:
            break
        kind = b.get("type") if isinstance(b, dict) else None
        if kind == "text":
            text = _clip(str(b.get("text", "")))
        elif kind == "tool_use":
            text = f"● {b.get('name', '')} {json.dumps(b.get('input'), ensure_ascii=False)}"
            text = _clip(text, 1000)
        elif kind == "tool_result":
            content = b.get("content")
            text = content if isinstance(content, str) else "\n".join(
                str(x.get("text", "")) for x in content if isinstance(x, dict)) if isinstance(content, list) else ""
            text = "⎿ " + _clip(text)
        else:
            text = f"[{kind} block]"
        budget[0] -= len(text)
        css = "tool" if kind == "tool_use" else "err" if kind == "tool_result" and b.get("is_error") else ""
        out.append(f'<pre class="{css}">{_e(text)}</pre>')
    out.append("</div>")
    return "".join(out)


def _event(detail) -> str:
    e = detail.event
    color = LAYER_COLORS.get(e.layer, "#6b7280")
    sizes = f" {e.before:,} → {e.after_tokens:,} tokens" if e.before is not None and e.after_tokens is not None else ""
    where = e.path or (e.paths[0] if e.paths else "")
    head = (f'<summary><span class="layer" style="background:{color}">{_e(e.layer)}</span>#{e.n} after request '
            f'{e.after} · {_e(e.trigger or e.text.split(" → ")[0])}{_e(sizes)} <span class="note">{_e(where)}</span>'
            "</summary>")
    body = []
    if detail.problem:
        body.append(f'<p class="err">{_e(detail.problem)}</p>')
    if detail.header:
        fields = " · ".join(f"{_e(k)}: {_e(json.dumps(v, ensure_ascii=False))}" for k, v in detail.header.items()
                            if k != "t")
        body.append(f'<p class="note">header — {fields}</p>')
    if e.summary:
        body.append(f"<h4>The summary that replaced the history</h4><pre>{_e(_clip(e.summary, 40_000))}</pre>")
    if detail.messages:
        budget = [EVENT_CHARS]
        body.append(f"<h4>{len(detail.messages)} message(s) saved in {_e(where)}</h4>")
        for m in detail.messages:
            if budget[0] <= 0:
                body.append('<p class="note">… the rest is in the file</p>')
                break
            body.append(_message(m, budget))
    elif detail.text:
        body.append(f"<h4>The start of {_e(where)}</h4><pre>{_e(_clip(detail.text))}</pre>")
    return f'<details id="event-{e.n}" class="event">{head}{"".join(body)}</details>'


def _table(t) -> str:
    rows = "".join(f"<tr><td>{r.n}</td><td>{_e(r.purpose)}</td><td>{r.context:,}</td><td>{r.reads:,}</td>"
                   f"<td>{r.writes:,}</td><td>{r.output:,}</td><td>{f'{r.hit:.0%}' if r.hit is not None else '–'}</td>"
                   f"<td>{_e(_money(r.cost))}</td><td>{_e(_money(r.total))}</td></tr>" for r in t.requests)
    return ("<details><summary>Every request</summary><table><tr><th>#</th><th>purpose</th><th>context</th>"
            "<th>cache read</th><th>cache write</th><th>output</th><th>hit</th><th>cost</th><th>total</th></tr>"
            f"{rows}</table></details>")


SCRIPT_HASH = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()


def timeline_html(t, details: list) -> str:
    notices = "".join(f'<p class="err">{_e(n)}</p>' for n in t.notices)
    events = "".join(_event(d) for d in details) or '<p class="note">no compaction happened in this session</p>'
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
            f"script-src 'sha256-{SCRIPT_HASH}'; img-src data:\">"
            f"<title>s08 session {_e(t.id)}</title><style>{STYLE}</style></head><body>"
            f"<h1>s08 session {_e(t.id)}</h1>"
            f'<p class="meta">model {_e(t.model or "?")} · CONTEXT_LIMIT {t.limit:,} · {len(t.requests)} requests · '
            f"{len(t.events)} compaction events · {len(t.children)} sub-agents · cost {_e(_money(t.cost))}</p>{notices}"
            f'<p id="stats" class="meta"></p>{chart(t)}<p id="readout" class="note">point at a request to read its '
            "numbers; click a marker to open its event</p>"
            f"{_children(t)}<h2>Compaction events</h2>{events}{_table(t)}"
            f"<script>{SCRIPT}</script></body></html>\n")
