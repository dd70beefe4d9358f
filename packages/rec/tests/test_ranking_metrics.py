import numpy as np
import pytest

from paddlectl.rec.errors import DataError
from paddlectl.rec.ranking import hits_at, ranking_metrics, top_k

sklearn_metrics = pytest.importorskip("sklearn.metrics", reason="scikit-learn is the NDCG oracle")


def test_top_k_orders_best_first_breaks_ties_by_index_and_skips_excluded():
    scores = np.array([[0.1, 0.9, 0.5, 0.9], [3.0, 2.0, 1.0, 0.0]])
    exclude = np.array([[False, False, False, False], [True, False, True, True]])
    np.testing.assert_array_equal(top_k(scores, 3, exclude), [[1, 3, 2], [1, -1, -1]])


def test_hand_computed_case():
    # user 0: relevant {2, 5}; retrieved 5 (rank 1), 7, 2 (rank 3)
    # user 1: relevant {4}; retrieved 0, 1, 3: a miss
    top = np.array([[5, 7, 2], [0, 1, 3]])
    relevant = np.array([[2, 5], [4, -1]])
    m = ranking_metrics(top, relevant, (1, 3))
    np.testing.assert_allclose(m["recall_at_1"], [0.5, 0.0])
    np.testing.assert_allclose(m["recall_at_3"], [1.0, 0.0])
    np.testing.assert_allclose(m["hit_rate_at_1"], [1.0, 0.0])
    np.testing.assert_allclose(m["ndcg_at_1"], [1.0, 0.0])
    dcg = 1.0 + 1.0 / np.log2(4)
    idcg = 1.0 + 1.0 / np.log2(3)
    np.testing.assert_allclose(m["ndcg_at_3"], [dcg / idcg, 0.0])


def test_ndcg_recall_hit_match_scikit_learn_over_the_unrated_items():
    rng = np.random.default_rng(0)
    users, items, k = 40, 60, 10
    scores = rng.normal(size=(users, items))
    rated = rng.random((users, items)) < 0.3
    relevant = np.full((users, 3), -1)
    for u in range(users):
        candidates = np.flatnonzero(~rated[u])
        relevant[u, : 1 + u % 3] = rng.choice(candidates, 1 + u % 3, replace=False)
    top = top_k(scores, k, rated)
    m = ranking_metrics(top, relevant, (k,))
    for u in range(users):
        keep = np.flatnonzero(~rated[u])
        truth = np.isin(keep, relevant[u]).astype(float)
        expected = sklearn_metrics.ndcg_score(truth[None], scores[u, keep][None], k=k)
        assert m[f"ndcg_at_{k}"][u] == pytest.approx(expected, abs=1e-12)
        best = keep[np.argsort(-scores[u, keep])[:k]]
        found = np.isin(relevant[u][relevant[u] >= 0], best)
        assert m[f"recall_at_{k}"][u] == pytest.approx(found.mean())
        assert m[f"hit_rate_at_{k}"][u] == float(found.any())


def test_no_candidate_is_never_a_hit():
    assert not hits_at(np.array([[-1, -1]]), np.array([[-1, 3]])).any()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: top_k(np.zeros(3), 2), "must be \\[users, items\\]"),
        (lambda: top_k(np.array([[np.nan, 1.0]]), 1), "NaN"),
        (lambda: top_k(np.zeros((2, 3)), 0), "positive integer"),
        (lambda: top_k(np.zeros((2, 3)), 1, np.zeros((2, 2), bool)), "exclusion mask"),
        (lambda: ranking_metrics(np.zeros((1, 2), int), np.array([[-1]]), (1,)), "no held-out item"),
        (lambda: ranking_metrics(np.zeros((1, 2), int), np.array([[1]]), (5,)), "fewer than k=5"),
    ],
)
def test_bad_input_is_a_data_error(call, message):
    with pytest.raises(DataError, match=message):
        call()
