"""Prompts per language (``en``, ``de``, ``it``) and mode (``semi``, ``coop``, ``comp``).

Only the goal sentence differs between modes. A player sees the items, its own values (never
the other's), its goal, the protocol with the localized proposal keyword, and how many
messages each player may send. Messages from the other player are relayed verbatim; proposals
never are: the other player is only told that a secret proposal was made.
"""

from __future__ import annotations

from collections.abc import Sequence

from distbench.games.negotiation.instances import Instance
from distbench.games.negotiation.items import LANGS
from distbench.games.negotiation.parse import KEYWORDS

MODES: tuple[str, ...] = ("semi", "coop", "comp")

_GOALS: dict[str, dict[str, str]] = {
    "en": {
        "semi": "Your goal: get as many points as possible for yourself.",
        "coop": "Your goal: make the sum of both players' points as large as possible.",
        "comp": "Your goal: make your points minus the other player's points as large as possible.",
    },
    "de": {
        "semi": "Dein Ziel: Hol so viele Punkte wie möglich für dich selbst.",
        "coop": "Dein Ziel: Mach die Summe der Punkte beider Spieler so groß wie möglich.",
        "comp": "Dein Ziel: Mach deine Punkte minus die Punkte des anderen Spielers so groß wie möglich.",
    },
    "it": {
        "semi": "Il tuo obiettivo: ottenere il maggior numero possibile di punti per te.",
        "coop": "Il tuo obiettivo: rendere la somma dei punti dei due giocatori la più grande possibile.",
        "comp": "Il tuo obiettivo: rendere i tuoi punti meno i punti dell'altro giocatore i più grandi possibile.",
    },
}

_TEXT: dict[str, dict[str, str]] = {
    "en": {
        "intro": "You are negotiating with another player over how to split these items: {items}.",
        "values": "Your values per item (the other player's values may differ and are secret): {values}.",
        "value": "{name}: {points} points each",
        "rules": (
            "You may each send at most {max_messages} messages. At any time, instead of a "
            "message, you can make your secret final proposal, listing the items YOU want: "
            "{example}. The other player will not see it, but must then make their own. If the "
            "two proposals together ask for no more than exists, each player gets the points of "
            "the items they asked for; otherwise both get 0."
        ),
        "start": "You start. Write your first message.",
        "relay": "The other player says: {text}",
        "must": ("The other player has made a secret final proposal. Now make yours, in the form "
                 "{example}."),
        "timeout": "No messages left. Make your secret final proposal now, in the form {example}.",
        "fair": "Let us split everything about evenly.",
        "greedy": "I would like the items I value.",
        "random": "Here is my offer.",
    },
    "de": {
        "intro": "Du verhandelst mit einem anderen Spieler darüber, wie diese Gegenstände aufgeteilt werden: {items}.",
        "values": "Deine Werte pro Gegenstand (die Werte des anderen Spielers können anders sein und sind geheim): {values}.",
        "value": "{name}: je {points} Punkte",
        "rules": (
            "Jeder von euch darf höchstens {max_messages} Nachrichten senden. Jederzeit kannst "
            "du statt einer Nachricht deinen geheimen endgültigen Vorschlag machen, mit den "
            "Gegenständen, die DU willst: {example}. Der andere Spieler sieht ihn nicht, muss "
            "dann aber seinen eigenen machen. Verlangen beide Vorschläge zusammen nicht mehr, "
            "als es gibt, bekommt jeder die Punkte der verlangten Gegenstände; sonst bekommen "
            "beide 0."
        ),
        "start": "Du beginnst. Schreib deine erste Nachricht.",
        "relay": "Der andere Spieler sagt: {text}",
        "must": ("Der andere Spieler hat einen geheimen endgültigen Vorschlag gemacht. Mach jetzt "
                 "deinen, in der Form {example}."),
        "timeout": ("Keine Nachrichten mehr übrig. Mach jetzt deinen geheimen endgültigen "
                    "Vorschlag, in der Form {example}."),
        "fair": "Teilen wir alles ungefähr gleich auf.",
        "greedy": "Ich möchte die Gegenstände, die mir etwas wert sind.",
        "random": "Hier ist mein Angebot.",
    },
    "it": {
        "intro": "Stai negoziando con un altro giocatore su come dividere questi oggetti: {items}.",
        "values": "I tuoi valori per oggetto (i valori dell'altro giocatore possono essere diversi e sono segreti): {values}.",
        "value": "{name}: {points} punti ciascuno",
        "rules": (
            "Ognuno di voi può inviare al massimo {max_messages} messaggi. In qualsiasi momento, "
            "invece di un messaggio, puoi fare la tua proposta finale segreta, con gli oggetti "
            "che vuoi TU: {example}. L'altro giocatore non la vedrà, ma dovrà poi fare la sua. "
            "Se le due proposte insieme non chiedono più di quanto esiste, ogni giocatore "
            "ottiene i punti degli oggetti che ha chiesto; altrimenti entrambi ottengono 0."
        ),
        "start": "Inizi tu. Scrivi il tuo primo messaggio.",
        "relay": "L'altro giocatore dice: {text}",
        "must": ("L'altro giocatore ha fatto una proposta finale segreta. Ora fai la tua, nella "
                 "forma {example}."),
        "timeout": ("Non restano messaggi. Fai ora la tua proposta finale segreta, nella forma "
                    "{example}."),
        "fair": "Dividiamo tutto più o meno a metà.",
        "greedy": "Vorrei gli oggetti che valgono qualcosa per me.",
        "random": "Ecco la mia offerta.",
    },
    # Hungarian: only the scripted players' sentences (clembench's instance files bring the
    # prompts).
    "hu": {
        "fair": "Osszunk el mindent nagyjából egyenlően.",
        "greedy": "Azokat a tárgyakat szeretném, amelyek nekem értékesek.",
        "random": "Íme az ajánlatom.",
    },
}


def text(lang: str, key: str, **fields: object) -> str:
    """A localized text of this module, formatted."""
    return _TEXT[lang][key].format(**fields)


def format_proposal(instance: Instance, amounts: Sequence[int], lang: str,
                    *, skip_zero: bool = False) -> str:
    """``[Proposal: 2 hats, 1 ball]`` in ``lang`` (singular for 1, plural otherwise)."""
    parts = [
        f"{n} {instance.name(lang, k, n)}"
        for k, n in enumerate(amounts)
        if n or not skip_zero
    ]
    return f"[{KEYWORDS[lang]}: {', '.join(parts)}]"


def example_proposal(instance: Instance, lang: str) -> str:
    """The format example: one item of the first type, two of the second when there are two."""
    amounts = [0] * instance.num_types
    amounts[0] = 1
    amounts[1] = min(2, instance.counts[1])
    return format_proposal(instance, amounts, lang, skip_zero=True)


def intro(instance: Instance, seat: str, mode: str, lang: str, max_messages: int) -> str:
    """The first prompt of the player in ``seat`` (``"a"`` or ``"b"``)."""
    if lang not in LANGS or mode not in MODES:
        raise ValueError(f"unknown language {lang!r} or mode {mode!r}")
    items = ", ".join(f"{c} {instance.name(lang, k, c)}" for k, c in enumerate(instance.counts))
    values = "; ".join(
        text(lang, "value", name=instance.name(lang, k, 2), points=v)
        for k, v in enumerate(instance.values(seat))
    )
    return "\n".join([
        text(lang, "intro", items=items),
        text(lang, "values", values=values),
        _GOALS[lang][mode],
        text(lang, "rules", max_messages=max_messages, example=example_proposal(instance, lang)),
    ])
