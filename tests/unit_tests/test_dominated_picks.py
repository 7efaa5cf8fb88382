"""No dominated pick (#34): the model's pick breaks ties among the candidates no other
outdoes, as an opinion, never a veto over one better on every count (within every limit,
as much of the request, the same wanted features, rated higher, no dearer), and the
why-line says who decided. Plain data, no model."""

from __future__ import annotations

from test_bundle_choice import candidate, two_item_plan

from graph.choosing.choice import choose, outdoes


def ids(choice: object) -> list[str]:
    return [c.summary.id for c in choice.picks]  # type: ignore[attr-defined]


def test_a_model_pick_another_candidate_outdoes_does_not_stand() -> None:
    # The model picked the first row; the next is rated higher and cheaper.
    plan = two_item_plan(230)
    pool = [
        candidate("pack-a", 183.99, 1, 1, rating=3.4),
        candidate("pack-b", 166.99, 1, 2, rating=3.9),
        candidate("lamp-a", 31.99, 2, 1, rating=4.2),
    ]
    choice = choose(plan, pool, ["pack-a", "lamp-a"])
    assert ids(choice) == ["pack-b", "lamp-a"]
    assert (
        "chosen in code in place of the model's pick pack-a, which pack-b outdoes"
        in (choice.reasons["pack-b"])
    )
    assert "the model's pick, among equals" in choice.reasons["lamp-a"]


def test_the_model_breaks_ties_among_candidates_none_outdoes() -> None:
    # Each has something the other lacks: the cheaper is rated lower, the dearer higher.
    plan = two_item_plan(300)
    pool = [
        candidate("pack-a", 120.0, 1, 1, rating=3.9),
        candidate("pack-b", 150.0, 1, 2, rating=4.8),
        candidate("lamp-a", 31.99, 2, 1),
    ]
    assert ids(choose(plan, pool, ["pack-a", "lamp-a"])) == ["pack-a", "lamp-a"]
    assert ids(choose(plan, pool, ["pack-b", "lamp-a"])) == ["pack-b", "lamp-a"]


def test_a_candidate_outdoes_only_on_every_count() -> None:
    plan = two_item_plan(200, features=["f0"])
    pick = candidate("pick", 50, 1, 1, rating=4.0, features=1)
    assert outdoes(candidate("better", 50, 1, 2, rating=4.5, features=1), pick, plan)
    assert not outdoes(candidate("plain", 40, 1, 2, rating=4.5), pick, plan)  # no feature
    assert not outdoes(candidate("dear", 60, 1, 2, rating=4.5, features=1), pick, plan)
    assert not outdoes(candidate("same", 45, 1, 2, rating=4.0, features=1), pick, plan)
    over = candidate("over", 45, 1, 2, rating=4.5, features=1)
    over.within_limits = False
    assert not outdoes(over, pick, plan)
    assert not outdoes(
        candidate("kind", 45, 1, 2, rating=4.5, features=1, of_kind=True),
        (candidate("sure", 50, 1, 1, rating=4.0, features=1, titled=True)),
        plan,
    )  # the pick's title says it is the kind; the other's does not


def test_a_pick_code_chose_alone_says_so() -> None:
    plan = two_item_plan(200)
    pool = [candidate("shoe", 90, 1, 1), candidate("bottle", 20, 2, 1)]
    choice = choose(plan, pool, [])
    assert all("chosen in code" in r for r in choice.reasons.values())
