"""An alignment as JSON, Markdown, a readable summary and one standalone HTML page (inline CSS, SVG
and script, nothing fetched)."""

from __future__ import annotations

import html
import json
from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from core.alignment.align import AlignedPair, Alignment, method_text
from core.alignment.align_gaps import TOP_GAPS, GapItem, GapReport, kind_name
from core.exporting.exports import markdown_text
from core.taxonomy.labels import NO_FUNCTION, ROLES

if TYPE_CHECKING:  # pragma: no cover
    from core.taxonomy.functions import FunctionTaxonomy


# -- exports --------------------------------------------------------------------------------------
def alignment_to_json(alignment: Alignment, indent: int | None = 2) -> str:
    return json.dumps(alignment.to_dict(), ensure_ascii=False, indent=indent)


def alignment_from_json(text: str) -> Alignment:
    return Alignment.from_dict(json.loads(text))


_md = markdown_text  # every text that reaches Markdown (titles, sentences, gap lines) is made inert


def _taxonomy(taxonomy: FunctionTaxonomy | None) -> FunctionTaxonomy | None:
    if taxonomy is not None:
        return taxonomy
    try:
        from core.taxonomy.functions import default_taxonomy

        return default_taxonomy()
    except Exception:  # only the names are lost
        return None


def _function_name(function: str, taxonomy: FunctionTaxonomy | None) -> str:
    if not function or function == NO_FUNCTION:
        return ""
    return taxonomy.name_of(function) if taxonomy is not None else function


def _summary_lines(alignment: Alignment) -> list[str]:
    """Counts in words: sentences aligned, how the pairs were found, what the similarity weighs."""
    cover_a, cover_b = alignment.coverage
    methods = Counter(p.method for p in alignment.pairs)
    merged = sum(1 for p in alignment.pairs if len(p.a_indices) > 1 or len(p.b_indices) > 1)
    ways = ", ".join(f"{count} {method_text(method)}" for method, count in sorted(
        methods.items(), key=lambda item: -item[1]))
    weight = alignment.settings.function_weight
    lines = [f"A: {alignment.a.title} ({len(alignment.a)} sentences, {100 * cover_a:.0f}% aligned)",
             f"B: {alignment.b.title} ({len(alignment.b)} sentences, {100 * cover_b:.0f}% aligned)",
             f"{len(alignment.pairs)} aligned pairs" + (f" ({ways})" if ways else "")
             + (f"; {merged} pair one sentence with several of the other text's" if merged else "") + ".",
             f"Similarity (0 to 1) weighs what the sentences do {100 * weight:.0f}% and what they are about "
             f"{100 * (1 - weight):.0f}%."]
    return lines


def summary_text(alignment: Alignment, top: int = 10, taxonomy: FunctionTaxonomy | None = None, *,
                 gaps: int | None = TOP_GAPS, more_hint: str = "") -> str:
    """A readable plain-text summary (the CLI's default): counts, the ``top`` most similar pairs, and
    the gaps most important first (the first ``gaps`` of them, all with None; ``more_hint`` says how
    to see the rest)."""
    taxonomy = _taxonomy(taxonomy)
    lines = _summary_lines(alignment)
    best = sorted(alignment.pairs, key=lambda p: -p.shown_score)[:top]
    if best:
        lines += ["", f"The {len(best)} most similar aligned pairs (similarity, what they share):"]
    for pair in best:
        label = _function_name(pair.function, taxonomy) or pair.role or "different roles"
        lines.append(f"  {pair.shown_score:.2f}  [{label}; {method_text(pair.method)}]")
        lines.append("     A: " + _clip(" ".join(alignment.a.sentences[i].text for i in pair.a_indices)))
        lines.append("     B: " + _clip(" ".join(alignment.b.sentences[j].text for j in pair.b_indices)))
    lines.append("")
    lines += _gap_lines(alignment, gaps, more_hint)
    return "\n".join(lines)


def _gap_lines(alignment: Alignment, gaps: int | None, more_hint: str) -> list[str]:
    report = alignment.gaps
    if not report.items:
        lines = ["Gaps: none found (both do the same things in the sections compared)."]
    else:
        shown = report.items if gaps is None else report.top(gaps)
        lines = [f"Gaps, most important first ({len(shown)} of {len(report.items)}):"]
        lines += [f"  {number:2d}. {item.text}" for number, item in enumerate(shown, 1)]
        rest = len(report.items) - len(shown)
        if rest:
            lines.append(f"  … and {rest} more{f' ({more_hint})' if more_hint else ''}.")
    lines += [f"  Not judged: {caveat}" for caveat in report.caveats]
    if report.note:
        lines.append(f"  ({report.note})")
    return lines


def _clip(text: str, width: int = 110) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _more(report: GapReport) -> str:
    """"12 more gaps" (the ones behind "more")."""
    count = len(report.more())
    return f"{count} more gap{'s' if count != 1 else ''}"


def _numbered_md(items: list[GapItem], start: int) -> list[str]:
    return [f"{number}. {_md(item.text)}" for number, item in enumerate(items, start)]


def alignment_to_markdown(alignment: Alignment) -> str:
    a, b = alignment.a, alignment.b
    report = alignment.gaps
    lines = [f"# Rhetorical alignment: {_md(a.title)} ↔ {_md(b.title)}", ""]
    lines += [f"- {_md(line)}" for line in _summary_lines(alignment)]
    lines += ["", "## Gaps, most important first", ""]
    lines += _numbered_md(report.top(), 1) or ["- none found"]
    if report.more():
        lines += ["", f"### {_more(report)}", "", *_numbered_md(report.more(), TOP_GAPS + 1)]
    if report.caveats:
        lines += ["", *(f"- Not judged: {_md(caveat)}" for caveat in report.caveats)]
    if report.note:
        lines += ["", f"_{_md(report.note)}_"]
    lines += ["", "## Role share per section (A / B)", "",
              "| Section | Sentences (confident role) | " + " | ".join(ROLES) + " |",
              "|---|---:|" + "---:|" * len(ROLES)]
    for share in alignment.gaps.role_shares:
        cells = [f"{100 * share.a[r]:.0f}% / {100 * share.b[r]:.0f}%" for r in ROLES]
        confident = (f" ({share.a_confident} / {share.b_confident})"
                     if share.a_confident >= 0 and share.b_confident >= 0 else "")
        counts = f"{share.a_sentences} / {share.b_sentences}{confident}"
        lines.append(f"| {kind_name(share.section_kind)} | {counts} | "
                     + " | ".join(cells) + " |")
    lines += ["", "## Aligned pairs", "", "| A | similarity (0-1) | B |", "|---|---:|---|"]
    for pair in alignment.pairs:
        text_a = " ".join(f"**A{i + 1}** {_md(a.sentences[i].text)}" for i in pair.a_indices)
        text_b = " ".join(f"**B{j + 1}** {_md(b.sentences[j].text)}" for j in pair.b_indices)
        label = " · ".join(x for x in (pair.role, pair.function) if x)
        shown = f" {label}" if label else ""
        lines.append(f"| {text_a} | {pair.shown_score:.2f}{shown} ({method_text(pair.method)}) | {text_b} |")
    for side, name, indices in ((a, "A", alignment.unaligned_a), (b, "B", alignment.unaligned_b)):
        lines += ["", f"## Unaligned in {name} ({len(indices)})", ""]
        lines += [f"- **{name}{i + 1}** ({side.sentences[i].role or '-'}): {_md(side.sentences[i].text)}"
                  for i in indices] or ["- none"]
    return "\n".join(lines) + "\n"


def _tint(color: str, strength: float = 0.16) -> str:
    """``color`` (#RRGGBB) mixed with white: an opaque light background any renderer understands."""
    r, g, b = (int(color[k: k + 2], 16) for k in (1, 3, 5))
    return "#" + "".join(f"{round(255 - strength * (255 - c)):02x}" for c in (r, g, b))


#: Okabe & Ito role colours, as the GUI's palette (app/gui/palette.py) uses them.
ROLE_COLORS = {"background": "#56B4E9", "objective": "#CC79A7", "method": "#F0E442", "result": "#D55E00",
               "conclusion": "#009E73", "other": "#999999"}


def _chain(pairs: list[AlignedPair]) -> list[int]:
    """Indices of the heaviest chain of pairs that are in order on both sides (laid out in one row
    each); the others are drawn as crossing links."""
    if not pairs:
        return []
    best = [p.score for p in pairs]
    back = [-1] * len(pairs)
    for k, pair in enumerate(pairs):
        for i in range(k):
            prev = pairs[i]
            if max(prev.a_indices) < min(pair.a_indices) and max(prev.b_indices) < min(pair.b_indices) \
                    and best[i] + pair.score > best[k]:
                best[k], back[k] = best[i] + pair.score, i
    k = int(np.argmax(best))
    chain: list[int] = []
    while k >= 0:
        chain.append(k)
        k = back[k]
    return chain[::-1]


_CSS = """
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#222;
background:#f6f6f4}
header{padding:14px 24px;background:#fff;border-bottom:1px solid #ddd}
h1{font-size:19px;margin:0 0 4px}
h2{font-size:16px;margin:18px 0 8px}
.meta{color:#555;font-size:13px;margin:2px 0}
.legend span{display:inline-block;margin-right:12px;font-size:13px}
.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px;border-radius:2px}
main{padding:0 24px 40px}
.panel{background:#fff;border:1px solid #ddd;border-radius:6px;padding:4px 16px 12px;margin:14px 0}
.gaps li{margin:3px 0}
h3{font-size:13.5px;margin:10px 0 4px;color:#444}
summary{cursor:pointer}
summary h2{display:inline-block}
.gaps ol{margin:0;padding-left:26px}
.gaps details summary{color:#0b63c4;margin:6px 0}
table.shares{border-collapse:collapse;font-size:12.5px}
table.shares td,table.shares th{padding:3px 8px;border-bottom:1px solid #eee;text-align:left;
vertical-align:middle}
.bar{display:flex;width:220px;height:12px;border-radius:2px;overflow:hidden;background:#eee}
.bar b{display:block;height:12px}
#view{position:relative;background:#fff;border:1px solid #ddd;border-radius:6px}
#links{position:absolute;left:0;top:0;pointer-events:none;overflow:visible}
table.align{width:100%;border-collapse:collapse;table-layout:fixed;position:relative;z-index:1}
table.align col.gut{width:86px}
table.align th{position:sticky;top:0;background:#fff;z-index:2;text-align:left;padding:8px 10px;
border-bottom:2px solid #ccc;font-size:13px}
table.align td{vertical-align:top;padding:3px 8px}
td.mid{text-align:center;color:#888;font-size:11px;vertical-align:middle!important}
.h{font-weight:700;font-size:13px;color:#333;margin:10px 0 4px;padding-top:4px;border-top:1px solid #e4e4e4}
.s{position:relative;margin:3px 0;padding:4px 8px 4px 10px;border-left:5px solid #999;border-radius:3px;
background:#fafafa;cursor:default;transition:background .1s}
.s .n{color:#777;font-size:11px;font-weight:600;margin-right:4px}
.s .lab{color:#666;font-size:11px;margin-left:4px;white-space:nowrap}
.s.un{opacity:.6}
.s .x{font-size:11px;margin-left:6px;text-decoration:none;color:#0b63c4;white-space:nowrap}
.s.hl{background:#fff3b0!important;box-shadow:0 0 0 2px #e0a800;opacity:1}
.s.dim{opacity:.35}
path.ln{fill:none;stroke:#9a9a9a;stroke-width:1.3;opacity:.55}
path.ln.cross{stroke-dasharray:4 3}
path.ln.hl{stroke:#e0a800;stroke-width:3;opacity:1}
footer{color:#777;font-size:12px;padding:0 24px 24px}
"""

_JS = """
(function(){
var view=document.getElementById('view'),svg=document.getElementById('links');
var tpl=document.getElementById('tpl'),paths=[],byId={};
function el(id){return document.getElementById(id);}
function draw(){
  for(var q=0;q<paths.length;q++){svg.removeChild(paths[q]);}
  paths=[];byId={};
  var box=view.getBoundingClientRect();
  svg.setAttribute('width',view.offsetWidth);svg.setAttribute('height',view.offsetHeight);
  var sents=view.querySelectorAll('.s[data-p]');
  for(var i=0;i<sents.length;i++){
    var a=sents[i];if(a.id.charAt(0)!=='a'){continue;}
    var partners=a.getAttribute('data-p').split(' ');
    for(var k=0;k<partners.length;k++){
      var b=el(partners[k]);if(!b){continue;}
      var ra=a.getBoundingClientRect(),rb=b.getBoundingClientRect();
      var x1=ra.right-box.left,y1=(ra.top+ra.bottom)/2-box.top;
      var x2=rb.left-box.left,y2=(rb.top+rb.bottom)/2-box.top,dx=Math.max(30,(x2-x1)/2);
      var p=tpl.cloneNode(false);p.removeAttribute('id');
      p.setAttribute('d','M'+x1+','+y1+' C'+(x1+dx)+','+y1+' '+(x2-dx)+','+y2+' '+x2+','+y2);
      p.setAttribute('class','ln'+(a.getAttribute('data-x')?' cross':''));
      svg.appendChild(p);paths.push(p);
      (byId[a.id]=byId[a.id]||[]).push(p);(byId[b.id]=byId[b.id]||[]).push(p);
    }
  }
}
function partnersOf(s){var p=s.getAttribute('data-p');return p?p.split(' '):[];}
function group(s){
  var ids=[s.id],first=partnersOf(s);
  for(var i=0;i<first.length;i++){ids.push(first[i]);var e=el(first[i]);
    if(e){var back=partnersOf(e);
      for(var j=0;j<back.length;j++){if(ids.indexOf(back[j])<0){ids.push(back[j]);}}}}
  return ids;
}
function mark(s,on){
  var ids=group(s);
  for(var i=0;i<ids.length;i++){var e=el(ids[i]);if(e){e.classList.toggle('hl',on);}
    var ps=byId[ids[i]]||[];for(var k=0;k<ps.length;k++){ps[k].classList.toggle('hl',on);}}
}
var all=view.querySelectorAll('.s');
for(var i=0;i<all.length;i++){
  all[i].addEventListener('mouseenter',function(){mark(this,true);});
  all[i].addEventListener('mouseleave',function(){mark(this,false);});
  all[i].addEventListener('click',function(){var p=partnersOf(this);var e=p.length?el(p[0]):null;
    if(e&&e.getAttribute('data-x')){e.scrollIntoView({block:'center',behavior:'smooth'});}});
}
draw();window.addEventListener('resize',draw);
if(document.fonts&&document.fonts.ready){document.fonts.ready.then(draw);}
})();
"""


def alignment_to_html(alignment: Alignment, taxonomy: FunctionTaxonomy | None = None) -> str:
    """One standalone page (inline CSS, SVG and script; nothing fetched): the gap list, role shares per
    section, and the two texts side by side, each sentence coloured by its role, aligned pairs on one
    row where their order allows it and every link drawn (dashed for links that cross); hovering a
    sentence highlights its partner(s). Without script the rows and the "→ B12" links still read."""
    a, b = alignment.a, alignment.b
    esc = html.escape
    taxonomy = _taxonomy(taxonomy)

    def fname(function: str) -> str:
        return _function_name(function, taxonomy)

    partners = {"a": alignment.partners("a"), "b": alignment.partners("b")}
    chain = [alignment.pairs[k] for k in _chain(alignment.pairs)]
    in_chain = {id(p) for p in chain}
    last_section: dict[str, tuple[str, str] | None] = {"a": None, "b": None}

    def sentence(side: str, index: int) -> str:
        rows = a if side == "a" else b
        s = rows.sentences[index]
        other = "b" if side == "a" else "a"
        pair = partners[side].get(index)
        heading = ""
        key = (s.section, s.section_kind)
        if key != last_section[side]:
            last_section[side] = key
            title = s.section or (kind_name(s.section_kind).capitalize() if s.section_kind else "")
            heading = f'<div class="h">{esc(title)}</div>' if title else ""
        color = ROLE_COLORS.get(s.role, "#999999")
        attrs = f' style="border-left-color:{color};background:{_tint(color)}"'
        classes = "s"
        extra = ""
        label = " · ".join(x for x in (s.role, fname(s.function)) if x)
        if pair is None:
            classes += " un"
        else:
            mates = pair.b_indices if side == "a" else pair.a_indices
            attrs += f' data-p="{" ".join(f"{other}{m + 1}" for m in mates)}"'
            if id(pair) not in in_chain:
                attrs += ' data-x="1"'
                extra = " ".join(f'<a class="x" href="#{other}{m + 1}">→ {other.upper()}{m + 1}</a>'
                                 for m in mates)
            label += f" · {pair.shown_score:.2f} · {method_text(pair.method)}"
        return (f'{heading}<div class="{classes}" id="{side}{index + 1}"{attrs}>'
                f'<span class="n">{side.upper()}{index + 1}</span> {esc(s.text)} '
                f'<span class="lab">{esc(label)}</span> {extra}</div>')

    rows: list[str] = []
    ia = ib = 0

    def loose(end_a: int, end_b: int) -> None:
        nonlocal ia, ib
        if ia < end_a or ib < end_b:
            left = "".join(sentence("a", i) for i in range(ia, end_a))
            right = "".join(sentence("b", j) for j in range(ib, end_b))
            rows.append(f'<tr><td>{left}</td><td class="mid"></td><td>{right}</td></tr>')
        ia, ib = max(ia, end_a), max(ib, end_b)

    for pair in chain:
        loose(min(pair.a_indices), min(pair.b_indices))
        left = "".join(sentence("a", i) for i in pair.a_indices)
        right = "".join(sentence("b", j) for j in pair.b_indices)
        how = esc(method_text(pair.method, explained=True))
        rows.append(f'<tr><td>{left}</td><td class="mid" title="{how}">{pair.shown_score:.2f}</td>'
                    f'<td>{right}</td></tr>')
        ia, ib = max(pair.a_indices) + 1, max(pair.b_indices) + 1
    loose(len(a), len(b))

    report = alignment.gaps
    gap_items = _html_gaps(report.top(), 1)
    if report.more():
        gap_items += (f"<details><summary>{_more(report)}</summary>"
                      f"{_html_gaps(report.more(), TOP_GAPS + 1)}</details>")
    gap_items = gap_items or "<p>No gaps found: both do the same things in the sections compared.</p>"
    gap_items += "".join(f'<p class="meta">Not judged: {esc(caveat)}</p>' for caveat in report.caveats)
    if report.note:
        gap_items += f'<p class="meta">{esc(report.note)}</p>'

    def bar(shares: dict[str, float]) -> str:
        parts = "".join(f'<b style="width:{100 * shares.get(r, 0):.1f}%;background:{ROLE_COLORS[r]}" '
                        f'title="{r} {100 * shares.get(r, 0):.0f}%"></b>'
                        for r in ROLES if shares.get(r, 0) > 0)
        return f'<div class="bar">{parts}</div>'

    def top_roles(shares: dict[str, float]) -> str:
        best = sorted(((v, r) for r, v in shares.items() if v > 0), reverse=True)[:3]
        return ", ".join(f"{r} {100 * v:.0f}%" for v, r in best)

    share_rows = "".join(
        f"<tr><td>{esc(kind_name(s.section_kind))}</td><td>A ({s.a_sentences})</td><td>{bar(s.a)}</td>"
        f"<td>{esc(top_roles(s.a))}</td></tr><tr><td></td><td>B ({s.b_sentences})</td><td>{bar(s.b)}</td>"
        f"<td>{esc(top_roles(s.b))}</td></tr>" for s in alignment.gaps.role_shares)
    legend = " ".join(f'<span><i style="background:{ROLE_COLORS[r]}"></i>{r}</span>' for r in ROLES)
    summary = "".join(f'<p class="meta">{esc(line)}</p>' for line in _summary_lines(alignment))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Alignment: {esc(a.title)} ↔ {esc(b.title)}</title>
<style>{_CSS}</style></head>
<body>
<header><h1>Rhetorical alignment</h1>{summary}
<p class="meta legend">{legend}
<span>&nbsp;│ — aligned · - - - aligned out of order · faded: unaligned</span></p>
</header>
<main>
<details class="panel gaps" open><summary><h2>Gaps ({len(alignment.gaps.items)}): what one paper does and the
other does not, most important first</h2></summary>{gap_items}</details>
<details class="panel" open><summary><h2>Role share per section</h2></summary>
<table class="shares">{share_rows}</table></details>
<div id="view"><svg id="links" width="0" height="0"><path id="tpl" class="ln" d=""></path></svg>
<table class="align"><colgroup><col><col class="gut"><col></colgroup>
<thead><tr><th>A: {esc(a.title)}</th><th class="mid">similarity</th><th>B: {esc(b.title)}</th></tr></thead>
<tbody>{"".join(rows)}</tbody></table></div>
</main>
<footer>Made by Rhetorica (offline). Hover a sentence to highlight its partner(s); click a sentence whose
partner is out of order to jump to it.</footer>
<script>{_JS}</script>
</body></html>
"""


def _html_gaps(items: list[GapItem], start: int) -> str:
    if not items:
        return ""
    listed = "".join(f"<li>{html.escape(item.text)}</li>" for item in items)
    return f'<ol start="{start}">{listed}</ol>'


EXPORTERS = {"json": alignment_to_json, "md": alignment_to_markdown, "html": alignment_to_html}
