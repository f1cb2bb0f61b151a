"""Explained predictions: each attribute's and each transition's share of a path's score.

The score of a label path ``y`` through a sequence ``x`` is a sum of terms,

``score(x, y) = Σ_t Σ_a x[t, a] · w[a, y_t]  +  Σ_t Σ_j d[t, j] · v[j, y_t]
+  Σ_{t ≥ 1} W[y_{t-1}, y_t]``

(``x[t, a]`` the value of attribute ``a`` at token ``t``, ``w`` the state
weights, ``d[t, j]`` dense feature ``j`` of token ``t`` and ``v`` its weights
(``dense_coef_``), ``W`` the transition weights), and ``log p(y | x) = score(x, y) -
log Z(x)``. :func:`explain_paths` lists those terms per token, per entity
and per sequence, so that they add up to the path's score; :func:`compare_paths`
gives the terms that change when one token is relabelled. Both take arrays and
named types (the fitted model, the encoded corpus, its decoding problem):
:meth:`CRFTagger.explain_prediction` and :meth:`CRFTagger.compare_labels`
encode X once and pass them in.

Every term is a :class:`Contribution` with a ``kind``: ``"attribute"`` for a
state feature (``value`` the attribute's value at the token, ``weight`` its
weight for the token's label), ``"transition"`` for a transition (``value``
1), and ``"dense"`` for a dense feature (``name`` ``"dense[j]"`` for
dimension ``j``, ``value`` the token's entry, ``weight`` the dimension's
weight for the label): one term per dimension, in the same lists as the
attributes, so ``top`` keeps the largest of either kind and sums the rest
into ``other``. With ``top``, only the ``top`` largest dense terms of each
token are built as objects (the others cannot be among its ``top`` largest).
"""

import math
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any, NamedTuple, Optional

import numpy as np

from .._engine.decoding import log_forward_backward, span_log_probs
from .entities import by_sequence, read_spans, span_probabilities

__all__ = [
    "AttributeComparison",
    "Contribution",
    "EntityExplanation",
    "LabelComparison",
    "SequenceExplanation",
    "TokenExplanation",
    "TransitionComparison",
    "compare_paths",
    "explain_paths",
]


class Contribution(NamedTuple):
    """One term of a path's score: ``contribution = weight × value``.

    Attributes
    ----------
    token : int
        Index of the token (in its sequence) the term belongs to; for a
        transition, the token it enters.
    kind : str
        ``"attribute"`` (a state feature), ``"dense"`` (a dense feature) or
        ``"transition"``.
    name : str
        The attribute's name (``"<slot N>"`` for a hashing tagger, whose
        attributes have no names: N is the hash slot), ``"dense[j]"`` for
        dense feature ``j``, or for a transition ``"<from label> -> <to
        label>"``.
    value : float
        The attribute's value at the token (repeated attributes of a token
        summed), or the dense feature's; 1.0 for a transition.
    weight : float
        The weight of the attribute or dense feature for the token's label,
        or of the transition.
    contribution : float
        ``weight * value``, the term's share of the path's score.
    """

    token: int
    kind: str
    name: str
    value: float
    weight: float
    contribution: float


@dataclass(frozen=True)
class TokenExplanation:
    """The terms of one token's label in a path's score.

    Attributes
    ----------
    index : int
        The token's index in its sequence.
    label : label
        The token's label in the path.
    previous_label : label or None
        The label of the token before, None for the first token.
    state : list of Contribution
        The attributes and dense features of the token with a non-zero
        contribution for ``label``, by decreasing absolute contribution
        (ties in the order of the token's features, then the dense
        dimensions); with ``top``, only the first ``top``.
        Attributes with weight 0, or without a weight for ``label``, add
        nothing and are not listed.
    n_other : int
        Number of non-zero attribute contributions left out by ``top``.
    other : float
        Their sum (0.0 when none is left out).
    state_score : float
        The sum of all attribute and dense contributions:
        ``sum(c.contribution for c in state) + other``.
    transition : Contribution or None
        The incoming transition, ``previous_label -> label``; None for the
        first token (a path's score has no start or end transition).
    score : float
        ``state_score`` plus the transition's contribution.
    """

    index: int
    label: Any
    previous_label: Any
    state: list
    n_other: int
    other: float
    state_score: float
    transition: Optional[Contribution]
    score: float


@dataclass(frozen=True)
class EntityExplanation:
    """The terms of one entity of a path, with its probability.

    Attributes
    ----------
    type : str
        The entity type, e.g. ``"LOC"``.
    start, end : int
        The entity's tokens are ``start`` to ``end - 1``.
    labels : tuple
        Their labels.
    probability : float
        ``p(y[start:end] = labels | x)``, whatever the labels outside the
        span (conditional on ``transition_constraints`` and ``allowed``),
        as in :meth:`~sklearn_crf.CRFTagger.predict_entities`.
    score : float
        The sum of the terms inside the entity: the attribute contributions
        of its tokens and the transitions between them. The entering
        transition (from token ``start - 1``) is not included: it is
        ``entering``. ``score`` is therefore the same for an entity wherever
        it stands.
    entering : Contribution or None
        The transition into the entity's first token; None when the entity
        starts the sequence.
    contributions : list of Contribution
        The terms of ``score`` (attributes, ``token`` saying whose, and
        inside transitions), by decreasing absolute contribution; with
        ``top``, only the first ``top``.
    n_other : int
        Number of non-zero terms left out by ``top``.
    other : float
        Their sum: ``sum(c.contribution for c in contributions) + other ==
        score``.
    """

    type: str
    start: int
    end: int
    labels: tuple
    probability: float
    score: float
    entering: Optional[Contribution]
    contributions: list
    n_other: int
    other: float


@dataclass(frozen=True)
class SequenceExplanation:
    """Why a label path has its score: the terms of every token, and the totals.

    The terms add up to the path's score: ``score == sum(t.score for t in
    tokens)`` and, for a path that the constraints allow, ``score ==
    log_probability + log_partition`` (up to float rounding).

    Attributes
    ----------
    index : int
        The sequence's index in X.
    labels : list
        The path's labels.
    tokens : list of TokenExplanation
        One per token.
    score : float
        The path's score, ``Σ_t tokens[t].score``.
    log_partition : float
        ``log Z(x)``, as :meth:`~sklearn_crf.CRFTagger.log_partition`.
    log_probability : float
        ``log p(labels | x)``, as :meth:`~sklearn_crf.CRFTagger.log_probability`
        (-inf for a path that ``transition_constraints`` or ``allowed``
        forbid; ``score`` is still its unconstrained score).
    entities : list of EntityExplanation or None
        The path's entities, in order; None when the tagger's labels are not
        strings.

    Examples
    --------
    >>> from sklearn_crf import CRFTagger
    >>> X = [[{"w": "Ana", "cap": True}, {"w": "runs"}],
    ...      [{"w": "Bo", "cap": True}, {"w": "sleeps"}],
    ...      [{"w": "The", "cap": True}, {"w": "end"}]]
    >>> y = [["B-PER", "O"], ["B-PER", "O"], ["O", "O"]]
    >>> crf = CRFTagger(c2=0.1).fit(X, y)
    >>> x = [{"w": "Ana", "cap": True}, {"w": "sleeps"}]
    >>> ex = crf.explain_prediction([x])[0]
    >>> print(ex.to_text(top=1, words=["Ana", "sleeps"]))
    sequence 0: score +2.9740 = log Z +3.2885 + log p -0.3146 (p = 0.7301)
    token 0 'Ana' B-PER: +0.9909 = state +0.9909
        +0.8470  w:Ana
        +0.1439  (1 more)
    token 1 'sleeps' O: +1.9831 = state +0.6640 + transition B-PER -> O +1.3191
        +0.6640  w:sleeps
    entity PER, tokens 0-0 'Ana', p = 0.8306: score +0.9909 (entering transition not included)
        +0.8470  token 0  w:Ana
        +0.1439  (1 more)
    >>> rows = ex.to_records()
    >>> [(r["token"], r["kind"], r["name"]) for r in rows]  # doctest: +NORMALIZE_WHITESPACE
    [(0, 'attribute', 'w:Ana'), (0, 'attribute', 'cap'), (1, 'attribute', 'w:sleeps'),
     (1, 'transition', 'B-PER -> O')]
    >>> bool(abs(sum(r["contribution"] for r in rows) - ex.score) < 1e-12)
    True
    """

    index: int
    labels: list
    tokens: list
    score: float
    log_partition: float
    log_probability: float
    entities: Optional[list] = field(default=None)

    @property
    def probability(self):
        """``p(labels | x)``, ``exp(log_probability)``."""
        return math.exp(self.log_probability)

    def to_text(self, top=5, words=None):
        """A readable rendering: the totals, then each token's and entity's terms.

        Parameters
        ----------
        top : int or None, default=5
            Number of terms to show per token and per entity, the largest in
            absolute value; the others are summed on one line. None shows
            every stored term.
        words : list of str, default=None
            The sequence's words, shown next to the token indices.

        Returns
        -------
        text : str
            One line per token and per term, numbers with 4 decimals.
        """
        top = check_top(top, "top")
        if words is not None and len(words) != len(self.tokens):
            raise ValueError(
                f"words has {len(words)} entries but sequence {self.index} has "
                f"{len(self.tokens)} tokens"
            )
        lines = [
            f"sequence {self.index}: score {self.score:+.4f} = log Z "
            f"{self.log_partition:+.4f} + log p {self.log_probability:+.4f} "
            f"(p = {self.probability:.4f})"
        ]
        for tok in self.tokens:
            word = "" if words is None else f" {words[tok.index]!r}"
            head = (f"token {tok.index}{word} {tok.label}: {tok.score:+.4f} = state "
                    f"{tok.state_score:+.4f}")
            if tok.transition is not None:
                head += f" + transition {tok.transition.name} {tok.transition.contribution:+.4f}"
            lines.append(head)
            lines.extend(_term_lines(tok.state, tok.n_other, tok.other, top, with_token=False))
        for ent in self.entities or ():
            span = f"tokens {ent.start}-{ent.end - 1}"
            if words is not None:
                span += " " + repr(" ".join(str(w) for w in words[ent.start:ent.end]))
            lines.append(
                f"entity {ent.type}, {span}, p = {ent.probability:.4f}: score "
                f"{ent.score:+.4f} (entering transition not included)"
            )
            lines.extend(_term_lines(ent.contributions, ent.n_other, ent.other, top,
                                     with_token=True))
        return "\n".join(lines)

    def __str__(self):
        return self.to_text()

    def to_records(self):
        """The terms as rows: a list of dicts, one per term of every token.

        Returns
        -------
        records : list of dict
            Keys ``"sequence"``, ``"token"``, ``"label"``, ``"kind"``
            (``"attribute"``, ``"transition"``, or ``"other"`` for the sum of
            a token's terms left out by ``top``, whose ``value`` and
            ``weight`` are NaN), ``"name"``, ``"value"``, ``"weight"`` and
            ``"contribution"``. The contributions sum to ``score``;
            ``pandas.DataFrame(records)`` makes a table of them.
        """
        rows = []
        for tok in self.tokens:
            terms = list(tok.state)
            if tok.transition is not None:
                terms.append(tok.transition)
            for c in terms:
                rows.append({"sequence": self.index, "token": tok.index, "label": tok.label,
                             "kind": c.kind, "name": c.name, "value": c.value,
                             "weight": c.weight, "contribution": c.contribution})
            if tok.n_other:
                rows.append({"sequence": self.index, "token": tok.index, "label": tok.label,
                             "kind": "other", "name": f"({tok.n_other} more)",
                             "value": math.nan, "weight": math.nan,
                             "contribution": tok.other})
        return rows


class AttributeComparison(NamedTuple):
    """One attribute of a token under two labels.

    Attributes
    ----------
    kind : str
        ``"attribute"`` or ``"dense"``.
    name : str
        The attribute's name, or ``"dense[j]"`` (see :class:`Contribution`).
    value : float
        Its value at the token.
    weight_a, weight_b : float
        Its weights for label A and label B (0 where it has none).
    difference : float
        ``(weight_a - weight_b) * value``: how much it favours A over B.
    """

    kind: str
    name: str
    value: float
    weight_a: float
    weight_b: float
    difference: float


class TransitionComparison(NamedTuple):
    """A transition of the two paths: into or out of the relabelled token.

    Attributes
    ----------
    name_a, name_b : str
        ``"<from> -> <to>"`` in the path with A and in the path with B.
    weight_a, weight_b : float
        Their weights.
    difference : float
        ``weight_a - weight_b``.
    """

    name_a: str
    name_b: str
    weight_a: float
    weight_b: float
    difference: float


@dataclass(frozen=True)
class LabelComparison:
    """Why label A and not label B at one token: the terms that differ.

    The two paths are the same except at token ``token``; every term of the
    other tokens cancels, so ``difference = score_a - score_b`` is the sum of
    ``state_difference`` and the ``difference`` of the two transitions, and,
    for paths the constraints allow, ``log_probability_a -
    log_probability_b`` (both paths have the same ``log Z``).

    Attributes
    ----------
    token : int
        The relabelled token.
    label_a, label_b : label
        Its label in each path.
    labels_a, labels_b : list
        The two paths.
    state : list of AttributeComparison
        The token's attributes with a non-zero weight for A or B, by
        decreasing absolute ``difference``.
    state_difference : float
        The sum of their differences.
    transition_in, transition_out : TransitionComparison or None
        The transition from the token before and to the token after (None at
        the ends of the sequence).
    difference : float
        ``score_a - score_b``.
    score_a, score_b : float
        The two paths' scores.
    log_probability_a, log_probability_b : float
        Their log-probabilities (-inf for a path that ``transition_constraints``
        or ``allowed`` forbid).

    Examples
    --------
    >>> from sklearn_crf import CRFTagger
    >>> X = [[{"w": "Ana", "cap": True}, {"w": "runs"}],
    ...      [{"w": "Bo", "cap": True}, {"w": "sleeps"}],
    ...      [{"w": "The", "cap": True}, {"w": "end"}]]
    >>> y = [["B-PER", "O"], ["B-PER", "O"], ["O", "O"]]
    >>> crf = CRFTagger(c2=0.1).fit(X, y)
    >>> x = [{"w": "Ana", "cap": True}, {"w": "sleeps"}]
    >>> print(crf.compare_labels(x, 0, "B-PER", "O"))
    token 0: B-PER rather than O by +1.6725 (log p -0.3146 vs -1.9871)
        state +1.1347
            +0.8470  w:Ana  (value 1, weight +0.8470 vs +0.0000)
            +0.2877  cap  (value 1, weight +0.1439 vs -0.1439)
        transition out B-PER -> O +1.3191 vs O -> O +0.7813: +0.5378
    """

    token: int
    label_a: Any
    label_b: Any
    labels_a: list
    labels_b: list
    state: list
    state_difference: float
    transition_in: Optional[TransitionComparison]
    transition_out: Optional[TransitionComparison]
    difference: float
    score_a: float
    score_b: float
    log_probability_a: float
    log_probability_b: float

    def to_text(self, top=10):
        """A readable rendering of the comparison.

        Parameters
        ----------
        top : int or None, default=10
            Number of attributes to show, the largest differences first; the
            others are summed on one line. None shows them all.

        Returns
        -------
        text : str
            The total difference, then the attributes and the transitions.
        """
        top = check_top(top, "top")
        lines = [
            f"token {self.token}: {self.label_a} rather than {self.label_b} by "
            f"{self.difference:+.4f} (log p {self.log_probability_a:+.4f} vs "
            f"{self.log_probability_b:+.4f})",
            f"    state {self.state_difference:+.4f}",
        ]
        shown = self.state if top is None else self.state[:top]
        for c in shown:
            lines.append(
                f"        {c.difference:+.4f}  {c.name}  (value {c.value:g}, weight "
                f"{c.weight_a:+.4f} vs {c.weight_b:+.4f})"
            )
        rest = self.state[len(shown):]
        if rest:
            lines.append(f"        {sum(c.difference for c in rest):+.4f}  ({len(rest)} more)")
        for what, tr in (("in", self.transition_in), ("out", self.transition_out)):
            if tr is not None:
                lines.append(
                    f"    transition {what} {tr.name_a} {tr.weight_a:+.4f} vs {tr.name_b} "
                    f"{tr.weight_b:+.4f}: {tr.difference:+.4f}"
                )
        return "\n".join(lines)

    def __str__(self):
        return self.to_text()


# --- the computation ----------------------------------------------------------------


class _ModelWeights:
    """The fitted weights in lookup form: (attribute, label) → weight, the
    transition matrix, and attribute id → name."""

    def __init__(self, model):
        layout = model.layout
        self.n_labels = L = int(layout.n_labels)
        coef = np.asarray(model.coef, dtype=np.float64)
        keys = layout.state_pairs().astype(np.int64) * L + layout.attr_label
        weights = coef[: layout.n_state]
        if keys.size > 1 and not bool(np.all(keys[1:] > keys[:-1])):
            order = np.argsort(keys, kind="stable")
            keys, weights = keys[order], weights[order]
        self.keys, self.weights = keys, weights
        self.trans = layout.transition_matrix(coef)
        self.dense = layout.dense_matrix(coef)  # (n_dense, L)
        self.classes = model.classes.tolist()
        vec = model.vectorizer
        self._names = getattr(vec, "feature_names_", None)
        self._slots = getattr(vec, "hash_slots_", None) if self._names is None else None

    def state_weights(self, attrs, codes):
        """Weight of attribute ``attrs[i]`` for label code ``codes[i]`` (0 without one)."""
        if self.keys.size == 0:
            return np.zeros(len(attrs))
        q = attrs.astype(np.int64) * self.n_labels + codes
        pos = np.searchsorted(self.keys, q)
        pos_in = np.minimum(pos, self.keys.size - 1)
        found = (pos < self.keys.size) & (self.keys[pos_in] == q)
        return np.where(found, self.weights[pos_in], 0.0)

    def names(self, attrs):
        """The names of a list of attribute ids."""
        if self._names is not None:
            names = self._names
            return [names[a] for a in attrs]
        if self._slots is not None:
            slots = self._slots
            return [f"<slot {int(slots[a])}>" for a in attrs]
        return [f"<attribute {a}>" for a in attrs]

    def transition_name(self, f, t):
        return f"{self.classes[f]} -> {self.classes[t]}"


def explain_paths(model, corpus, problem, codes, *, given, scheme, top, n_threads,
                  entities=True):
    """The :class:`SequenceExplanation` of each label path of a corpus.

    Parameters
    ----------
    model : FittedModel
        The fitted weights, labels and vectorizer
        (:class:`~sklearn_crf._model.weights.FittedModel`).
    corpus : EncodedCorpus
        The sequences, encoded by ``model.vectorizer``.
    problem : DecodingProblem
        Their state scores and transitions with the constraints applied
        (:class:`~sklearn_crf._engine.decoding.DecodingProblem`): what the
        probabilities are conditional on.
    codes : ndarray of shape (n_tokens,)
        The label codes of the paths explained.
    given : bool
        Whether the paths were given (else: decoded under ``problem``); a
        given path that ``problem`` forbids has its entities read with
        conlleval's rules rather than ``scheme``'s.
    scheme : str or None
        The tagging scheme entities are read with (None: conlleval's rules).
    top : int or None
        Terms kept per token and per entity (None: all).
    n_threads : int
        Threads of the engine's calls.
    entities : bool, default=True
        Whether to list the entities (only for string labels).

    Returns
    -------
    explanations : list of SequenceExplanation
    """
    weights = _ModelWeights(model)
    seq_ptr = problem.seq_ptr
    fb = log_forward_backward(problem, n_threads)
    log_p = span_log_probs(problem, fb, seq_ptr[:-1], np.diff(seq_ptr), seq_ptr[:-1], codes,
                           n_threads)
    log_z = fb.log_z
    tokens = _token_terms(weights, corpus, codes, top)
    spans = None
    if entities and all(isinstance(label, str) for label in weights.classes):
        spans = _entity_spans(weights, problem, fb, codes, log_p, given, scheme, n_threads)
    out = []
    seq_ptr = seq_ptr.tolist()
    for s in range(len(seq_ptr) - 1):
        full = tokens[seq_ptr[s]:seq_ptr[s + 1]]
        toks = [_token_explanation(weights, codes[seq_ptr[s]:seq_ptr[s + 1]], i, terms, top)
                for i, terms in enumerate(full)]
        score = math.fsum(tok.score for tok in toks)
        ents = None
        if spans is not None:
            ents = [_entity_explanation(type_, a, b, p, toks, full, top)
                    for type_, a, b, p in spans[s]]
        out.append(SequenceExplanation(
            index=s, labels=[tok.label for tok in toks], tokens=toks, score=score,
            log_partition=float(log_z[s]), log_probability=float(log_p[s]), entities=ents,
        ))
    return out


def compare_paths(model, corpus, problem, t, labels_a, labels_b, codes, *, n_threads):
    """The :class:`LabelComparison` of two paths through one sequence that
    differ at token ``t``.

    ``corpus`` and ``problem`` hold the sequence once; ``labels_a`` and
    ``labels_b`` are the two paths, ``codes`` their label codes one after the
    other (``2 * n_tokens``).
    """
    n = len(labels_a)
    twice = np.zeros(2, dtype=np.int64)
    both = problem._replace(scores=np.concatenate([problem.scores, problem.scores]),
                            seq_ptr=np.array([0, n, 2 * n], dtype=np.int64))
    ex_a, ex_b = explain_paths(model, corpus[twice], both, codes, given=True, scheme=None,
                               top=None, n_threads=n_threads, entities=False)
    tok_a, tok_b = ex_a.tokens[t], ex_b.tokens[t]
    weights_b = {c.name: c.weight for c in tok_b.state}
    values = {c.name: c.value for c in tok_b.state}
    names = [c.name for c in tok_a.state] + [c.name for c in tok_b.state]
    weights_a = {c.name: c.weight for c in tok_a.state}
    values.update({c.name: c.value for c in tok_a.state})
    kinds = {c.name: c.kind for c in tok_b.state + tok_a.state}
    state = []
    for name in dict.fromkeys(names):
        wa, wb, v = weights_a.get(name, 0.0), weights_b.get(name, 0.0), values[name]
        state.append(AttributeComparison(kinds[name], name, v, wa, wb, wa * v - wb * v))
    state.sort(key=lambda c: -abs(c.difference))
    trans_in = _transition_comparison(tok_a.transition, tok_b.transition)
    trans_out = None
    if t + 1 < n:
        trans_out = _transition_comparison(ex_a.tokens[t + 1].transition,
                                           ex_b.tokens[t + 1].transition)
    return LabelComparison(
        token=t, label_a=labels_a[t], label_b=labels_b[t], labels_a=labels_a, labels_b=labels_b,
        state=state, state_difference=tok_a.state_score - tok_b.state_score,
        transition_in=trans_in, transition_out=trans_out,
        difference=ex_a.score - ex_b.score, score_a=ex_a.score, score_b=ex_b.score,
        log_probability_a=ex_a.log_probability, log_probability_b=ex_b.log_probability,
    )


class _TokenTerms(NamedTuple):
    """The terms of one token's score, as :func:`_token_terms` lists them.

    ``state``: its non-zero attribute terms as Contributions in feature order
    (repeated attributes merged), then its dense terms by dimension; with
    ``top``, only the ``top`` largest dense terms are there (no other can be
    among the ``top`` largest of the token), the others summed in
    ``rest_sum`` (``rest_count`` of them). ``transition``: the incoming
    transition's Contribution, or None.
    """

    state: list
    transition: Optional[Contribution]
    rest_count: int
    rest_sum: float


def _token_terms(model, corpus, codes, top=None):
    """The :class:`_TokenTerms` of every token (all sequences one after another)."""
    n_tokens = corpus.n_tokens
    entry_tok = np.repeat(np.arange(n_tokens), np.diff(corpus.tok_ptr))
    weights = model.state_weights(corpus.tok_attr, codes[entry_tok])
    keep = np.flatnonzero(weights * corpus.tok_val)
    bounds = np.searchsorted(entry_tok[keep], np.arange(n_tokens + 1)).tolist()
    attrs = corpus.tok_attr[keep].tolist()
    names = model.names(attrs)
    vals = corpus.tok_val[keep].tolist()
    ws = weights[keep].tolist()
    seq_ptr = corpus.seq_ptr.tolist()
    code_list = codes.tolist()
    trans = model.trans
    dense_terms = _dense_terms(model, corpus, codes, top)
    out = []
    for s in range(len(seq_ptr) - 1):
        for i in range(seq_ptr[s], seq_ptr[s + 1]):
            t = i - seq_ptr[s]
            lo, hi = bounds[i], bounds[i + 1]
            if len(set(attrs[lo:hi])) == hi - lo:
                state = [Contribution(t, "attribute", names[e], vals[e], ws[e], ws[e] * vals[e])
                         for e in range(lo, hi)]
            else:  # a repeated attribute: one term, its values summed
                merged = {}
                for e in range(lo, hi):
                    if attrs[e] in merged:
                        merged[attrs[e]][1] += vals[e]
                    else:
                        merged[attrs[e]] = [names[e], vals[e], ws[e]]
                state = [Contribution(t, "attribute", n, v, w, w * v)
                         for n, v, w in merged.values() if w * v != 0.0]
            rest_count, rest_sum = 0, 0.0
            if dense_terms is not None:
                terms, rest_count, rest_sum = dense_terms(i, t)
                state.extend(terms)
            transition = None
            if t > 0:
                f, k = code_list[i - 1], code_list[i]
                w = float(trans[f, k])
                transition = Contribution(t, "transition", model.transition_name(f, k),
                                          1.0, w, w)
            out.append(_TokenTerms(state, transition, rest_count, rest_sum))
    return out


def _dense_terms(model, corpus, codes, top):
    """None without dense features; else ``terms(i, t) -> (contributions,
    rest_count, rest_sum)``: the non-zero dense Contributions of corpus token
    ``i`` (token ``t`` of its sequence) by dimension, with ``top`` only the
    ``top`` largest (ties to the lower dimension), the others counted and
    summed."""
    n_dense = model.dense.shape[0]
    if n_dense == 0 or corpus.n_tokens == 0:
        return None
    dense = corpus.dense
    by_label = np.ascontiguousarray(model.dense.T)  # (L, n_dense)
    names = [f"dense[{j}]" for j in range(n_dense)]

    def terms(i, t):
        v = dense[i].astype(np.float64)
        w = by_label[codes[i]]
        c = v * w
        dims = np.flatnonzero(c)
        rest_count, rest_sum = 0, 0.0
        if top is not None and len(dims) > top:
            order = dims[np.argsort(-np.abs(c[dims]), kind="stable")]
            dims = np.sort(order[:top])
            rest_count, rest_sum = len(order) - top, math.fsum(c[order[top:]].tolist())
        return [Contribution(t, "dense", names[j], float(v[j]), float(w[j]), float(c[j]))
                for j in dims.tolist()], rest_count, rest_sum

    return terms


def _by_size(terms):
    """Terms by decreasing absolute contribution, ties in their order."""
    return sorted(terms, key=_minus_size)


def _minus_size(term):
    return -abs(term.contribution)


def _token_explanation(model, codes, t, terms, top):
    state, trans = terms.state, terms.transition
    ranked = _by_size(state)
    kept = ranked if top is None else ranked[:top]
    left = ranked[len(kept):]
    rest = [terms.rest_sum] if terms.rest_count else []
    state_score = math.fsum([c.contribution for c in state] + rest)
    return TokenExplanation(
        index=t, label=model.classes[codes[t]],
        previous_label=None if t == 0 else model.classes[codes[t - 1]],
        state=kept, n_other=len(left) + terms.rest_count,
        other=math.fsum([c.contribution for c in left] + rest),
        state_score=state_score, transition=trans,
        score=state_score + (0.0 if trans is None else trans.contribution),
    )


def _entity_explanation(type_, a, b, probability, toks, full, top):
    terms = []
    rest, n_rest = [], 0
    for t in range(a, b):
        state, trans, rest_count, rest_sum = full[t]
        terms.extend(state)
        if rest_count:
            rest.append(rest_sum)
            n_rest += rest_count
        if t > a and trans is not None and trans.contribution != 0.0:
            terms.append(trans)
    score = math.fsum(toks[t].state_score for t in range(a, b)) + math.fsum(
        toks[t].transition.contribution for t in range(a + 1, b)
    )
    ranked = _by_size(terms)
    kept = ranked if top is None else ranked[:top]
    left = ranked[len(kept):]
    return EntityExplanation(
        type=type_, start=a, end=b, labels=tuple(toks[t].label for t in range(a, b)),
        probability=float(probability), score=score, entering=toks[a].transition,
        contributions=kept, n_other=len(left) + n_rest,
        other=math.fsum([c.contribution for c in left] + rest),
    )


def _entity_spans(weights, problem, fb, codes, log_p, given, scheme, n_threads):
    """Per sequence, [(type, start, end, probability)] of the paths' entities,
    read as :meth:`CRFTagger.predict_entities` reads them (a given path that
    ``problem`` forbids with conlleval's rules), each with the engine's
    probability of its labels."""
    seq_ptr = problem.seq_ptr.tolist()
    classes = weights.classes
    code_list = codes.tolist()
    sequences = [[classes[k] for k in code_list[a:b]] for a, b in zip(seq_ptr[:-1], seq_ptr[1:])]
    schemes = [scheme if ok or not given else None for ok in np.isfinite(log_p).tolist()]
    spans = read_spans(sequences, schemes)
    probabilities = span_probabilities(problem, fb, spans, codes, n_threads)
    return by_sequence(len(sequences), spans, probabilities)


def _transition_comparison(ca, cb):
    if ca is None:
        return None
    return TransitionComparison(ca.name, cb.name, ca.weight, cb.weight, ca.weight - cb.weight)


def _term_lines(terms, n_other, other, top, *, with_token):
    shown = terms if top is None else terms[:top]
    lines = []
    for c in shown:
        where = f"token {c.token}  " if with_token else ""
        lines.append(f"    {c.contribution:+.4f}  {where}{c.name}")
    rest = terms[len(shown):]
    n_rest = len(rest) + n_other
    if n_rest:
        total = math.fsum(c.contribution for c in rest) + other
        lines.append(f"    {total:+.4f}  ({n_rest} more)")
    return lines


def check_top(top, name):
    if top is None:
        return None
    if isinstance(top, bool) or not isinstance(top, Integral) or top < 1:
        raise ValueError(f"{name} must be a positive integer or None, got {top!r}")
    return int(top)
