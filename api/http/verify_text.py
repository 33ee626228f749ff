"""The words of the verification page, in each language it speaks
(docs/design.md, Verification page). English is the default and the
reference: every language has every key of it, which a test checks."""

from __future__ import annotations

from collections.abc import Mapping

from domain.verification import WARNINGS

__all__ = ["LANGUAGES", "TEXT", "event_label", "status_label", "warning_text"]

_EN: dict[str, str] = {
    "site": "Proofgate product check",
    "verdict": "Verdict",
    "AUTHENTIC": "Authentic",
    "AUTHENTIC.why": "The brand's certificate for this product is genuine and its history "
    "is intact.",
    "SUSPICIOUS": "Suspicious",
    "SUSPICIOUS.why": "The certificate is genuine, but something about this product needs care.",
    "COUNTERFEIT": "Counterfeit",
    "COUNTERFEIT.why": "This product's certificate does not check out. Do not trust this item.",
    "checks": "What this verdict rests on",
    "hash.ok": "The product record matches its certificate.",
    "hash.bad": "The product record does not match its certificate.",
    "signature.ok": "The certificate is signed by the issuer (key {key}).",
    "signature.bad": "The certificate signature is not valid.",
    "chain.ok": "The provenance history is intact ({events} events).",
    "chain.bad": "The provenance history has been altered or is incomplete.",
    "status": "Status: {status}.",
    "claim.none": "No consumer has registered this product as theirs.",
    "claim.held": "A consumer has registered this product as theirs.",
    "warnings": "Warnings",
    "product": "Product",
    "name": "Name",
    "brand": "Brand",
    "sku": "Article number",
    "category": "Category",
    "gtin": "GTIN",
    "serial": "Serial number",
    "lot": "Lot",
    "registered": "Registered",
    "code": "Verification code",
    "scans": "Checks recorded",
    "provenance": "Provenance",
    "provenance.none": "No events have been recorded for this product yet.",
    "provenance.count": "{events} events recorded; the latest first:",
    "record": "Record this check",
    "record.why": "Recording your check adds it to this product's history, which helps "
    "the brand spot copies. Nothing about you is stored but a salted hash of your address.",
    "recorded": "Your check was recorded (check number {count}).",
    "record.failed": "Your check could not be recorded.",
    "passport": "Product passport (JSON-LD)",
    "not_found.title": "No product has this code",
    "not_found.body": "The code {code} is not registered. Check that you typed it as printed "
    "on the label; if it came from a scan, the label may not be genuine.",
    "malformed.title": "This is not a verification code",
    "malformed.body": "A verification code is 12 letters and digits, printed on the label "
    "as three groups of four (for example ABCD-EFGH-JKMN).",
    "expired.title": "This page is out of date",
    "expired.body": "Your check was not recorded because the page was opened too long ago "
    "or on another network. Open the product's page again and record the check there.",
    "limited.title": "Too many checks",
    "limited.body": "Too many checks have come from your network. Wait a minute and try again.",
    "error.title": "The check could not be completed",
    "error.body": "Something went wrong on our side. Try again in a moment.",
    "back": "Back to the product's page",
    "ACTIVE": "active",
    "TRANSFERRED": "transferred to a new owner",
    "FLAGGED": "under investigation by the brand",
    "RECALLED": "recalled by the brand",
    "MANUFACTURED": "Manufactured",
    "SHIPPED": "Shipped",
    "RECEIVED": "Received",
    "INSPECTED": "Inspected",
    "SOLD": "Sold",
    "EVENT.TRANSFERRED": "Transferred",
    "EVENT.RECALLED": "Recalled",
    "CUSTOM": "Other event",
    "warning.hash": WARNINGS["hash"],
    "warning.signature": WARNINGS["signature"],
    "warning.recalled": WARNINGS["recalled"],
    "warning.chain": WARNINGS["chain"],
    "warning.flagged": WARNINGS["flagged"],
    "warning.claimed": WARNINGS["claimed"],
}

_FR: dict[str, str] = {
    "site": "Vérification de produit Proofgate",
    "verdict": "Verdict",
    "AUTHENTIC": "Authentique",
    "AUTHENTIC.why": "Le certificat de la marque pour ce produit est authentique et son "
    "historique est intact.",
    "SUSPICIOUS": "Suspect",
    "SUSPICIOUS.why": "Le certificat est authentique, mais ce produit appelle à la prudence.",
    "COUNTERFEIT": "Contrefaçon",
    "COUNTERFEIT.why": "Le certificat de ce produit n'est pas valable. Ne vous fiez pas à "
    "cet article.",
    "checks": "Sur quoi repose ce verdict",
    "hash.ok": "La fiche du produit correspond à son certificat.",
    "hash.bad": "La fiche du produit ne correspond pas à son certificat.",
    "signature.ok": "Le certificat est signé par l'émetteur (clé {key}).",
    "signature.bad": "La signature du certificat n'est pas valable.",
    "chain.ok": "L'historique de traçabilité est intact ({events} événements).",
    "chain.bad": "L'historique de traçabilité a été modifié ou est incomplet.",
    "status": "Statut : {status}.",
    "claim.none": "Aucun consommateur n'a enregistré ce produit à son nom.",
    "claim.held": "Un consommateur a enregistré ce produit à son nom.",
    "warnings": "Avertissements",
    "product": "Produit",
    "name": "Nom",
    "brand": "Marque",
    "sku": "Référence",
    "category": "Catégorie",
    "gtin": "GTIN",
    "serial": "Numéro de série",
    "lot": "Lot",
    "registered": "Enregistré le",
    "code": "Code de vérification",
    "scans": "Vérifications enregistrées",
    "provenance": "Traçabilité",
    "provenance.none": "Aucun événement n'a encore été enregistré pour ce produit.",
    "provenance.count": "{events} événements enregistrés ; le plus récent d'abord :",
    "record": "Enregistrer cette vérification",
    "record.why": "Enregistrer votre vérification l'ajoute à l'historique du produit, ce qui "
    "aide la marque à repérer les copies. Seule une empreinte salée de votre adresse est "
    "conservée.",
    "recorded": "Votre vérification a été enregistrée (vérification n° {count}).",
    "record.failed": "Votre vérification n'a pas pu être enregistrée.",
    "passport": "Passeport numérique du produit (JSON-LD)",
    "not_found.title": "Aucun produit ne porte ce code",
    "not_found.body": "Le code {code} n'est pas enregistré. Vérifiez qu'il est saisi tel "
    "qu'imprimé sur l'étiquette ; s'il provient d'un scan, l'étiquette n'est peut-être pas "
    "authentique.",
    "malformed.title": "Ce n'est pas un code de vérification",
    "malformed.body": "Un code de vérification compte 12 lettres et chiffres, imprimés sur "
    "l'étiquette en trois groupes de quatre (par exemple ABCD-EFGH-JKMN).",
    "expired.title": "Cette page n'est plus à jour",
    "expired.body": "Votre vérification n'a pas été enregistrée : la page a été ouverte il y "
    "a trop longtemps ou depuis un autre réseau. Rouvrez la page du produit et enregistrez-y "
    "la vérification.",
    "limited.title": "Trop de vérifications",
    "limited.body": "Trop de vérifications proviennent de votre réseau. Patientez une minute "
    "puis réessayez.",
    "error.title": "La vérification n'a pas pu aboutir",
    "error.body": "Un problème est survenu de notre côté. Réessayez dans un instant.",
    "back": "Retour à la page du produit",
    "ACTIVE": "actif",
    "TRANSFERRED": "cédé à un nouveau propriétaire",
    "FLAGGED": "en cours d'examen par la marque",
    "RECALLED": "rappelé par la marque",
    "MANUFACTURED": "Fabriqué",
    "SHIPPED": "Expédié",
    "RECEIVED": "Reçu",
    "INSPECTED": "Contrôlé",
    "SOLD": "Vendu",
    "EVENT.TRANSFERRED": "Cédé",
    "EVENT.RECALLED": "Rappelé",
    "CUSTOM": "Autre événement",
    "warning.hash": "La fiche du produit ne correspond pas à son certificat.",
    "warning.signature": "La signature du certificat n'est pas valable.",
    "warning.recalled": "Ce produit a été rappelé par sa marque.",
    "warning.chain": "L'historique de traçabilité a été modifié ou est incomplet.",
    "warning.flagged": "Ce produit fait l'objet d'un examen par sa marque.",
    "warning.claimed": "Ce produit a été enregistré au nom d'un autre consommateur. Si vous "
    "l'avez acheté neuf, il s'agit peut-être d'une contrefaçon à l'étiquette clonée.",
}

TEXT: Mapping[str, Mapping[str, str]] = {"en": _EN, "fr": _FR}
LANGUAGES = tuple(TEXT)
"""Primary subtags, the default first (``api.http.languages.negotiate_language``)."""

_WARNING_KEYS = {text: f"warning.{name}" for name, text in WARNINGS.items()}
_EVENT_KEYS = {"TRANSFERRED": "EVENT.TRANSFERRED", "RECALLED": "EVENT.RECALLED"}


def warning_text(text: Mapping[str, str], warning: str) -> str:
    """A verdict's warning (``domain.verification.WARNINGS``) in the page's
    language; one this page does not know is shown as the domain wrote it."""
    key = _WARNING_KEYS.get(warning)
    return text[key] if key is not None else warning


def event_label(text: Mapping[str, str], event_type: str) -> str:
    return text.get(_EVENT_KEYS.get(event_type, event_type), event_type)


def status_label(text: Mapping[str, str], status: str) -> str:
    return text.get(status, status)
