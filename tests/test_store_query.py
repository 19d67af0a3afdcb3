"""Queries of the store: the ranking, the history, the leader as a model, the statistics check."""

import numpy as np

from automodel import store as S
from test_store_observe import _grid, _runs


def test_ranking_history_leader_and_verify(store_url):
    path = store_url
    S.observe(path, "app", _grid())
    second = S.observe(path, "app", _runs(5, 4))
    board = S.ranking(path, "app", top=5)
    assert list(board.columns) == ["rank", "id", "score", "n_terms", "formula"]
    assert board["rank"].tolist() == [1, 2, 3, 4, 5] and (np.diff(board["score"]) >= 0).all()
    history = S.history(path, "app")
    assert history["update"].tolist() == [1, 2] and history["added"].tolist() == [32, 4]
    model = S.leader_model(path, "app")
    grid = _grid(1)
    assert np.median(np.abs(model.predict(grid) / grid["time"] - 1)) < 0.1
    assert model.formula == second.leader_after  # the leader observe reports (the selection rule's)
    assert S.leader_model(path, "app", 0).formula == S.ranking(path, "app", top=1)["formula"].iloc[0]
    counts = S.verify(path, "app")
    assert counts["runs"] == 36
    pruned = S.ranking(path, "app", pruned=True, top=3)
    assert list(pruned.columns) == ["id", "update", "at", "score", "n_terms", "structure", "reason"]
    assert "*" in pruned["structure"].iloc[0] and "**" not in pruned["structure"].iloc[0]
