"""The only home of CRF numerics.

* :mod:`.config` — the numba options (the one table);
* :mod:`.scores` — state scores (dense and sparse weights), the entries by
  attribute range and the per-attribute sums (observed and expected counts),
  logsumexp;
* :mod:`.forward_backward` — forward-backward, scaled and in log space (one
  each), marginals, expected counts, span probabilities, and CRFsuite's
  arithmetic for l2sgd;
* :mod:`.lanes` — the fit's scaled forward-backward over lanes of sentences
  (several sentences per vector instruction) and its block kernels;
* :mod:`.viterbi` — the list Viterbi (n-best; the best path at n=1), path
  scores, reachability under constraints;
* :mod:`.decoding` — constraints as -inf scores and the decoders over them;
* :mod:`.simd` — the 8-double vector type the lanes use (LLVM intrinsics);
* :mod:`.driver` — the one batch driver: fixed blocks on plain threads;
* :mod:`.threads` — thread counts (``n_jobs``, Dask workers);
* :mod:`.first_use` — the one notice of a first call that compiles.
"""

from .decoding import (
    DecodingProblem,
    LogForwardBackward,
    NBest,
    apply_constraints,
    check_feasible,
    log_forward_backward,
    nbest,
    nbest_log_probabilities,
    posterior_problem,
    span_log_probs,
    unconstrained_best_paths,
    unconstrained_best_paths_dense,
)
from .driver import (
    BLOCK_TOKENS,
    BestPaths,
    Marginals,
    attribute_ranges,
    block_bounds,
    forward_backward_batch,
    log_forward_backward_batch,
    nbest_batch,
    needs_compiling,
    run_ranges,
    span_log_probabilities_batch,
    viterbi_batch,
)
from .forward_backward import (
    MAX_SCALED_SPREAD,
    ScaledWorkspace,
    TransitionTerms,
    backward_scaled,
    edge_marginals_log,
    edge_marginals_scaled,
    edge_outer_sum_scaled,
    edge_sum_log,
    exp_nonpositive,
    expected_counts_sequence,
    forward_backward_blocks_log,
    forward_backward_log,
    forward_backward_scaled_crfsuite,
    forward_scaled,
    marginals_log,
    marginals_scaled,
    marginals_sequence,
    node_marginals_log,
    node_marginals_scaled,
    scaled_workspace,
    transition_gradient,
    transition_terms,
)
from .lanes import (
    LANES,
    LaneWorkspace,
    forward_backward_blocks,
    gradient_blocks_scaled,
    lane_workspace,
    lanes_backward,
    lanes_block,
    lanes_counts,
    lanes_forward,
)
from .scores import (
    CountRows,
    EntryIndex,
    add_path_features,
    add_path_features_exact,
    attribute_counts,
    count_rows,
    entry_index,
    logsumexp_row,
    max_length,
    observed_counts,
    pair_frequencies,
    scatter_state_counts,
    state_scores_dense,
    state_scores_dense_range,
    state_scores_sparse,
    state_scores_sparse_range,
    state_scores_sparse_range_exact,
)
from .viterbi import (
    ViterbiWorkspace,
    best_path_of_entries,
    best_paths_sparse,
    first_dead_tokens,
    list_viterbi,
    list_viterbi_sequences,
    path_score,
    viterbi_workspace,
)
