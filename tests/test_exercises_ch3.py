"""Chapter 3 exercises (action values and policies): every planted wrong answer is rejected with its
hint in both languages, the wrong answers whose values are right but whose side effect is wrong are
rejected for that side effect, right answers written other ways pass, and the cases contain what
makes each mistake visible.

The checks common to every exercise (stub, shapes, languages ...) are in test_exercises.py.
"""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.distributions import Categorical  # noqa: E402

from gatherbook.exercises import ch3, get, names, run_check  # noqa: E402
from gatherbook.exercises._messages import MESSAGES as CHECKER_MESSAGES  # noqa: E402
from gatherbook.runtime import LANGUAGES  # noqa: E402

CH3 = [n for n in names() if n.startswith("ch3.")]


def test_chapter_3_has_five_exercises():
    assert CH3 == ["ch3.q_taken", "ch3.dqn_target", "ch3.double_dqn_target", "ch3.policy_logprobs",
                   "ch3.n_step_target"]


# --- the planted wrong answers the issue lists ---------------------------------------------------

@pytest.mark.parametrize("name,key", [
    ("ch3.q_taken", "forgot_squeeze"),                  # the (B, 1) / (B,) mix-up
    ("ch3.q_taken", "squeezed_batch"),
    ("ch3.dqn_target", "keepdim_max"),                   # (B, 1) max: a (B, B) target
    ("ch3.double_dqn_target", "forgot_squeeze"),
    ("ch3.double_dqn_target", "online_max"),             # max from the online network
    ("ch3.double_dqn_target", "target_max"),
    ("ch3.double_dqn_target", "swapped"),
    ("ch3.dqn_target", "no_terminal_mask"),              # forgetting 1 - terminated
    ("ch3.double_dqn_target", "no_terminal_mask"),
    ("ch3.n_step_target", "no_terminal_mask"),
    ("ch3.n_step_target", "last_step_only"),
    ("ch3.dqn_target", "done_includes_truncated"),       # bootstrapping through truncated wrongly
    ("ch3.policy_logprobs", "probabilities"),            # gathering from probabilities
    ("ch3.policy_logprobs", "softmax_then_log"),
    ("ch3.n_step_target", "gamma_not_powered"),
    ("ch3.n_step_target", "discount_off_by_one"),
])
def test_planted_wrong_answers_are_named_in_both_languages(name, key):
    m = next(m for m in get(name).mistakes if m.key == key)
    for lang in LANGUAGES:
        r = run_check(name, m.fn, lang=lang)
        assert not r.passed and r.hint_key == key, r.message
        assert ch3.MESSAGES[lang][name.split(".")[1]][key] in r.message


SIDE_EFFECTS = [(name, key, fn, kind) for name, planted in ch3.SIDE_EFFECT_MISTAKES.items()
                for key, fn, kind in planted]


@pytest.mark.parametrize("name,key,fn,kind", SIDE_EFFECTS, ids=[f"{n}-{k}" for n, k, _, _ in SIDE_EFFECTS])
def test_right_values_with_a_wrong_side_effect_are_rejected_for_it(name, key, fn, kind):
    """A target with a gradient into the target network, a replay batch changed in place, a
    log-prob cut out of the graph: the values are right, so the checker names the side effect."""
    ex = get(name)

    def case():  # fresh copies: the in-place answers change their inputs
        return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in ex.edge_cases[0])

    assert torch.allclose(fn(*case()).detach(), ex.reference(*case()), atol=1e-6)
    for lang in LANGUAGES:
        r = run_check(name, fn, lang=lang)
        assert not r.passed and r.case == 1 and r.kind == kind, r.message
        assert r.hint_key == "generic." + kind
        assert CHECKER_MESSAGES[lang]["generic." + kind] in r.message


def test_the_side_effect_mistakes_cover_the_issue():
    keys = {(n, k) for n, k, _, _ in SIDE_EFFECTS}
    assert ("ch3.dqn_target", "target_with_grad") in keys
    assert ("ch3.double_dqn_target", "target_with_grad") in keys
    assert ("ch3.dqn_target", "in_place_reward") in keys
    assert ("ch3.n_step_target", "in_place_rewards") in keys


# --- right answers written other ways pass ------------------------------------------------------

def test_q_taken_alternatives():
    def by_indexing(q, a):
        return q[torch.arange(q.shape[0]), a]

    def by_loop(q, a):
        return torch.stack([q[i, a[i]] for i in range(q.shape[0])])

    def by_one_hot(q, a):
        return (q * F.one_hot(a, q.shape[1]).to(q.dtype)).sum(1)

    for fn in (by_indexing, by_loop, by_one_hot,
               lambda q, a: torch.take_along_dim(q, a[:, None], dim=1)[:, 0],
               lambda q, a: q.gather(-1, a.unsqueeze(-1)).squeeze(-1)):
        r = run_check("ch3.q_taken", fn, lang="en")
        assert r.passed, r.message


def test_dqn_target_alternatives():
    def detached(q, r, te, tr, g):
        return (r + g * (1 - te.float()) * q.max(1).values).detach()

    def with_where(q, r, te, tr, g):
        with torch.no_grad():
            return torch.where(te, r, r + g * q.amax(dim=1))

    def with_clone(q, r, te, tr, g):
        with torch.no_grad():
            y = r.clone()
            y += g * (~te).float() * q.max(dim=1).values  # in place on a copy: fine
        return y

    for fn in (detached, with_where, with_clone):
        r = run_check("ch3.dqn_target", fn, lang="en")
        assert r.passed, r.message


def test_double_dqn_target_alternatives():
    def by_indexing(on, ta, r, te, g):
        with torch.no_grad():
            best = on.argmax(1)
            return r + g * (~te).float() * ta[torch.arange(ta.shape[0]), best]

    def by_one_hot(on, ta, r, te, g):
        mask = F.one_hot(on.argmax(1), on.shape[1]).to(ta.dtype)
        return (r + g * (1 - te.float()) * (ta * mask).sum(1)).detach()

    for fn in (by_indexing, by_one_hot):
        r = run_check("ch3.double_dqn_target", fn, lang="en")
        assert r.passed, r.message


def test_policy_logprobs_alternatives_and_gradients():
    for fn in (lambda x, a: Categorical(logits=x).log_prob(a),
               lambda x, a: -F.cross_entropy(x, a, reduction="none"),
               lambda x, a: x.gather(1, a[:, None])[:, 0] - x.logsumexp(1),
               lambda x, a: x.log_softmax(1)[torch.arange(x.shape[0]), a]):
        r = run_check("ch3.policy_logprobs", fn, lang="en")
        assert r.passed, r.message


def test_n_step_target_alternatives():
    def by_loop(rewards, terminated, q, gamma):
        with torch.no_grad():
            n = rewards.shape[1]
            ret = rewards.new_zeros(rewards.shape[0])
            alive = rewards.new_ones(rewards.shape[0])
            for k in range(n):
                ret = ret + gamma ** k * rewards[:, k]
                alive = alive * (~terminated[:, k]).float()
            return ret + gamma ** n * alive * q.max(1).values

    r = run_check("ch3.n_step_target", by_loop, lang="en")
    assert r.passed, r.message


# --- the cases contain what makes the mistakes visible -----------------------------------------

def test_batches_differ_from_the_number_of_actions_and_include_a_batch_of_one():
    for name in CH3:
        cases = get(name).cases()
        assert cases[0][0].shape[0] > 1
        assert any(c[0].shape[0] == 1 for c in cases[:4]), name
        assert sum(c[0].shape[0] == c[0].shape[1] for c in cases) <= 1, name


def test_dqn_cases_have_truncated_only_and_both_flags():
    cases = get("ch3.dqn_target").cases()
    terminated = torch.cat([c[2] for c in cases])  # (next_q_target, reward, terminated, truncated, gamma)
    truncated = torch.cat([c[3] for c in cases])
    assert (truncated & ~terminated).any() and (truncated & terminated).any()


def test_double_dqn_cases_have_rows_where_the_networks_disagree():
    for online, target, reward, terminated, gamma in get("ch3.double_dqn_target").cases():
        assert (online.argmax(1) != target.argmax(1)).any()
        assert online.shape[0] == 1 or not (online.sort(1).values.diff(1) == 0).any()  # no ties


def test_n_step_cases_terminate_early_and_late():
    cases = get("ch3.n_step_target").cases()
    rewards, terminated = cases[0][0], cases[0][1]
    steps = terminated.float().argmax(1)[terminated.any(1)]
    assert (steps == 0).any() and (steps == rewards.shape[1] - 1).any()
    for rewards, terminated, _, _ in cases:  # nothing is rewarded after a termination
        after = terminated.float().cumsum(1) - terminated.float() > 0
        assert (rewards[after] == 0).all()


def test_policy_cases_underflow_in_float32():
    logits = get("ch3.policy_logprobs").cases()[2][0]
    assert (logits.softmax(-1) == 0).any()
