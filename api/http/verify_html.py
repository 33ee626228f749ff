"""The verification page's HTML, built as text with every stored value
escaped (docs/design.md, Verification page).

No template engine: one page and three notices, whose every inserted value
goes through ``_e``. The page works without scripts; its one script, with
the style, carries the response's CSP nonce.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from .verify_text import TEXT, event_label, status_label, warning_text

__all__ = ["PROVENANCE_SHOWN", "PageView", "render_notice", "render_page"]

PROVENANCE_SHOWN = 5
"""Events listed on the page, newest first; the passport has them all."""

_STYLE = """
:root{color-scheme:light;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
line-height:1.5;color:#1b1b1b;background:#f6f6f4}
body{margin:0}main{max-width:40rem;margin:0 auto;padding:1rem}
h1{font-size:2rem;margin:.25rem 0}h2{font-size:1.2rem;margin:1.5rem 0 .5rem}
.verdict{border-radius:.75rem;padding:1rem 1.25rem;border:2px solid}
.verdict p{margin:.25rem 0}.label{font-size:.9rem;text-transform:uppercase;letter-spacing:.05em}
.AUTHENTIC{background:#e7f5ec;border-color:#1d7a3e;color:#0f4a24}
.SUSPICIOUS{background:#fff3dc;border-color:#a25e00;color:#5c3500}
.COUNTERFEIT,.notice{background:#fdebeb;border-color:#b3261e;color:#6e1410}
ul.checks{list-style:none;padding:0;margin:0}
ul.checks li{padding:.5rem 0 .5rem 2rem;position:relative;border-bottom:1px solid #ddd}
ul.checks li span{position:absolute;left:.25rem;font-weight:bold}
.ok{color:#1d6b37}.bad{color:#b3261e}
.warnings{background:#fff3dc;border-left:4px solid #a25e00;padding:.5rem 1rem;margin:1rem 0}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0}
dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
ol.events{padding-left:1.25rem}ol.events li{margin:.25rem 0}
form{margin:1rem 0}button{font:inherit;font-size:1.1rem;padding:.75rem 1.25rem;min-height:3rem;
border-radius:.5rem;border:0;background:#1f4fa8;color:#fff;cursor:pointer;width:100%}
button:focus-visible,a:focus-visible{outline:3px solid #1b1b1b;outline-offset:2px}
a{color:#1f4fa8}.small{font-size:.9rem;color:#444}
.status{font-weight:600;color:#0f4a24}
"""

_SCRIPT = """
(function(){var f=document.getElementById("record");if(!f||!window.fetch)return;
var s=document.getElementById("record-status"),sent=false;
function go(){if(sent||document.visibilityState!=="visible"||document.prerendering)return;
sent=true;fetch(f.action,{method:"POST",credentials:"same-origin",
headers:{"Accept":"application/json"},body:new URLSearchParams(new FormData(f))})
.then(function(r){return r.ok?r.json():Promise.reject(r.status)})
.then(function(d){s.textContent=f.dataset.recorded.replace("{count}",d.scanCount);f.hidden=true})
.catch(function(){sent=false})}
document.addEventListener("visibilitychange",go);document.addEventListener("prerenderingchange",go);go()})();
"""


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


@dataclass(frozen=True)
class PageView:
    """What the page shows of a verification of a known product."""

    code: str
    result: str
    hash_valid: bool
    signature_valid: bool
    chain_intact: bool
    claimed: bool
    warnings: Sequence[str]
    product: Mapping[str, Any]
    brand_name: str | None
    events: Sequence[Mapping[str, Any]]
    token: str
    recorded: int | None = None
    """The product's scan count after this page recorded one; None: not recorded."""


def _document(lang: str, title: str, nonce: str, body: str, script: bool = False) -> str:
    text = TEXT[lang]
    scripts = f'<script nonce="{nonce}">{_SCRIPT}</script>' if script else ""
    return (
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="robots" content="noindex, nofollow">'
        f"<title>{_e(title)} · {_e(text['site'])}</title>"
        f'<style nonce="{nonce}">{_STYLE}</style></head>'
        f"<body><main>{body}</main>{scripts}</body></html>"
    )


def _check(ok: bool, message: str) -> str:
    mark = (
        '<span class="ok" aria-hidden="true">✓</span>'
        if ok
        else ('<span class="bad" aria-hidden="true">✗</span>')
    )
    return f"<li>{mark}{_e(message)}</li>"


def _checks(view: PageView, text: Mapping[str, str]) -> str:
    product = view.product
    status = str(product.get("status", ""))
    items = [
        _check(view.hash_valid, text["hash.ok" if view.hash_valid else "hash.bad"]),
        _check(
            view.signature_valid,
            text["signature.ok"].format(key=product.get("keyId", ""))
            if view.signature_valid
            else text["signature.bad"],
        ),
        _check(
            view.chain_intact,
            text["chain.ok"].format(events=len(view.events))
            if view.chain_intact
            else text["chain.bad"],
        ),
        _check(
            status in ("ACTIVE", "TRANSFERRED"),
            text["status"].format(status=status_label(text, status)),
        ),
        _check(not view.claimed, text["claim.held" if view.claimed else "claim.none"]),
    ]
    section = f'<h2 id="checks">{_e(text["checks"])}</h2><ul class="checks">{"".join(items)}</ul>'
    if view.warnings:
        warnings = "".join(f"<li>{_e(warning_text(text, w))}</li>" for w in view.warnings)
        section += f'<div class="warnings"><h2>{_e(text["warnings"])}</h2><ul>{warnings}</ul></div>'
    return f'<section aria-labelledby="checks">{section}</section>'


def _facts(view: PageView, text: Mapping[str, str]) -> str:
    product = view.product
    rows = [
        ("name", product.get("name")),
        ("brand", view.brand_name),
        ("category", product.get("category")),
        ("sku", product.get("sku")),
        ("gtin", product.get("gtin")),
        ("serial", product.get("serial")),
        ("lot", product.get("lot")),
        ("registered", str(product.get("createdAt", ""))[:10]),
        ("code", view.code),
        ("scans", view.recorded if view.recorded is not None else product.get("scanCount", 0)),
    ]
    facts = "".join(f"<dt>{_e(text[key])}</dt><dd>{_e(value)}</dd>" for key, value in rows if value)
    return (
        f'<section aria-labelledby="product"><h2 id="product">{_e(text["product"])}</h2>'
        f"<dl>{facts}</dl></section>"
    )


def _provenance(view: PageView, text: Mapping[str, str]) -> str:
    heading = f'<h2 id="provenance">{_e(text["provenance"])}</h2>'
    if not view.events:
        body = f"<p>{_e(text['provenance.none'])}</p>"
    else:
        latest = list(reversed(view.events))[:PROVENANCE_SHOWN]
        items = "".join(
            f"<li><strong>{_e(event_label(text, str(event.get('type', ''))))}</strong>"
            f' · <time datetime="{_e(event.get("occurredAt"))}">'
            f"{_e(str(event.get('occurredAt', ''))[:10])}</time>"
            + (f" · {_e(event['location'])}" if event.get("location") else "")
            + "</li>"
            for event in latest
        )
        count = text["provenance.count"].format(events=len(view.events))
        body = f'<p>{_e(count)}</p><ol class="events">{items}</ol>'
    return f'<section aria-labelledby="provenance">{heading}{body}</section>'


def _record(view: PageView, text: Mapping[str, str]) -> str:
    if view.recorded is not None:
        done = text["recorded"].format(count=view.recorded)
        return f'<p class="status" role="status">{_e(done)}</p>'
    return (
        f'<form id="record" method="post" action="/verify/{_e(view.code)}" '
        f'data-recorded="{_e(text["recorded"])}">'
        f'<input type="hidden" name="token" value="{_e(view.token)}">'
        f'<button type="submit">{_e(text["record"])}</button></form>'
        f'<p class="status" id="record-status" role="status"></p>'
        f'<p class="small">{_e(text["record.why"])}</p>'
    )


def render_page(view: PageView, lang: str, nonce: str) -> str:
    text = TEXT[lang]
    verdict = (
        f'<header class="verdict {_e(view.result)}"><p class="label">{_e(text["verdict"])}</p>'
        f"<h1>{_e(text[view.result])}</h1><p>{_e(text[view.result + '.why'])}</p></header>"
    )
    passport = f'<p><a href="/dpp/{_e(view.code)}.json">{_e(text["passport"])}</a></p>'
    body = (
        verdict
        + _record(view, text)
        + _checks(view, text)
        + _facts(view, text)
        + _provenance(view, text)
        + passport
    )
    title = f"{text[view.result]}: {view.product.get('name', '')}"
    return _document(lang, title, nonce, body, script=view.recorded is None)


def render_notice(kind: str, lang: str, nonce: str, code: str | None = None) -> str:
    """A page for a code that is not one (``malformed``), not known
    (``not_found``), a stale form (``expired``) or a rate limit (``limited``)."""
    text = TEXT[lang]
    back = (
        f'<p><a href="/verify/{_e(code)}">{_e(text["back"])}</a></p>'
        if code is not None and kind in ("expired", "limited")
        else ""
    )
    body = (
        f'<header class="verdict notice"><h1>{_e(text[kind + ".title"])}</h1></header>'
        f"<p>{_e(text[kind + '.body'].format(code=code or ''))}</p>{back}"
    )
    return _document(lang, text[kind + ".title"], nonce, body)
