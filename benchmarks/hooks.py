"""Where the core reaches a feature without importing it.

The core calls these hooks; each feature app registers what it offers in its AppConfig.ready().
A feature that is not installed simply registers nothing and the core still works. The other
direction needs no hook: features import the core freely. (Signals in signals.py serve the same
purpose for "this happened" notifications; hooks are for "give me your part of this answer".)

- run joiners: fields of a run submission that join the runs to something a feature owns
  (bisection: `"bisect": id` and `"commit"`), checked before the runs are stored and joined in
  the same transaction, with the feature's part of the response;
- verdict sources: the `verdicts` of a submission's response (regressions);
- run provenance: what produced a run, beyond the core's artifact and message (simulations);
- run page sections: blocks a feature adds to a run's page (traces; simulations' "predict this
  run");
- machine page sections: blocks a feature adds to a machine's page (simulations' twins);
- demo steps: what `load_demo` loads beyond the core's runs (a mail thread, a trace).
"""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


class RunJoiner(Protocol):
    """A feature that submitted runs can join."""

    key: str  # its key in a submission's response, e.g. "bisect"

    def claim(self, *, fields: Mapping, user) -> object | None:
        """The checked claim these submission fields make, None when they make none; raises
        InputError (with its status) to refuse the whole submission before anything is stored."""

    def join_all(self, *, joins: list[tuple[object, Any, str]]) -> None:
        """Join (claim, run, where) triples; called inside the transaction storing the runs."""

    def answer(self, *, claim: object, run) -> dict | None:
        """What the response says about `run` having joined (a "page" key is made absolute)."""


@dataclass(frozen=True)
class PageSection:
    template: str
    context: dict


@dataclass(frozen=True)
class DemoStep:
    order: int
    name: str
    load: Callable[[Callable[[str], None]], None]  # given a function that prints a line


@dataclass
class _Hooks:
    run_joiners: dict[str, RunJoiner] = field(default_factory=dict)
    verdict_sources: dict[str, Callable[[list], list[dict]]] = field(default_factory=dict)
    run_provenance: dict[str, Callable[[Any], dict]] = field(default_factory=dict)
    run_page_sections: dict[str, Callable[[Any], PageSection | None]] = field(
        default_factory=dict)
    demo_steps: dict[str, DemoStep] = field(default_factory=dict)
    machine_page_sections: dict[str, Callable[[Any], PageSection | None]] = field(
        default_factory=dict)


# Keyed by a name, so registering twice (ready() in tests) replaces instead of doubling.
_hooks = _Hooks()


def register_run_joiner(joiner: RunJoiner) -> None:
    _hooks.run_joiners[joiner.key] = joiner


def register_verdict_source(name: str, source: Callable[[list], list[dict]]) -> None:
    _hooks.verdict_sources[name] = source


def register_run_provenance(name: str, provider: Callable[[Any], dict]) -> None:
    _hooks.run_provenance[name] = provider


def register_run_page_section(name: str, section: Callable[[Any], PageSection | None]) -> None:
    _hooks.run_page_sections[name] = section


def register_machine_page_section(name: str,
                                  section: Callable[[Any], PageSection | None]) -> None:
    _hooks.machine_page_sections[name] = section


def register_demo_step(step: DemoStep) -> None:
    _hooks.demo_steps[step.name] = step


# --- what the core calls -------------------------------------------------------------------

@dataclass
class RunClaims:
    """The claims one submission's fields make, one per joiner that found one."""

    claims: list[tuple[RunJoiner, object]] = field(default_factory=list)

    def join(self, runs: list, where: str = "") -> None:
        join_claimed([(self, run, where) for run in runs])

    def answers(self, run) -> dict:
        answers = {}
        for joiner, claim in self.claims:
            answer = joiner.answer(claim=claim, run=run)
            if answer:
                answers[joiner.key] = answer
        return answers


def run_claims(*, fields, user) -> RunClaims:
    if not isinstance(fields, Mapping):
        return RunClaims()
    found = []
    for joiner in _hooks.run_joiners.values():
        claim = joiner.claim(fields=fields, user=user)
        if claim is not None:
            found.append((joiner, claim))
    return RunClaims(found)


def join_claimed(joins: Iterable[tuple[RunClaims, Any, str]]) -> None:
    """Every (claims, run, where) of a submission, each joiner called once with all its runs."""
    by_joiner: dict[str, list[tuple[object, Any, str]]] = {}
    for claims, run, where in joins:
        for joiner, claim in claims.claims:
            by_joiner.setdefault(joiner.key, []).append((claim, run, where))
    for key, triples in by_joiner.items():
        _hooks.run_joiners[key].join_all(joins=triples)


def verdicts_for(runs: list) -> list[dict]:
    return [verdict for source in _hooks.verdict_sources.values() for verdict in source(runs)]


def provenance_of(run) -> dict:
    found: dict = {}
    for provider in _hooks.run_provenance.values():
        found.update(provider(run))
    return found


def page_sections_of(run) -> list[PageSection]:
    sections = (section(run) for section in _hooks.run_page_sections.values())
    return [section for section in sections if section is not None]


def machine_page_sections_of(machine) -> list[PageSection]:
    sections = (section(machine) for section in _hooks.machine_page_sections.values())
    return [section for section in sections if section is not None]


def demo_steps() -> list[DemoStep]:
    return sorted(_hooks.demo_steps.values(), key=lambda step: (step.order, step.name))
