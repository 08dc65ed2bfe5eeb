"""Partita's command-line tools from Python: partita.generate, partita.partition and
partita.infer call the library functions behind `partita generate`, `partita partition` and
`partita infer` (no subprocess), so errors arrive as partita.Error subclasses (UsageError for
a bad argument, FormatError, IoError) and results as dicts (docs/python.md, "Tools").
partita.command_path() finds the `partita` binary that came with this package.
"""
import os

from . import _C

__all__ = ["__version__", "generate", "partition", "infer", "command_path"]

__version__ = _C.__version__


def _path(p):
    return os.fspath(p)


def generate(out, *, hetero="", nodes=None, avg_degree=None, feat_dim=None, classes=None,
             seed=0, homophily=None, power_law=2.5, feature_noise=1.0, train_fraction=0.6,
             valid_fraction=0.2, test_fraction=0.2, threads=0):
    """`partita generate --out OUT ...`: writes a synthetic dataset in the numpy layout (or,
    hetero="mag", an ogbn-mag-shaped heterogeneous one). Keywords left None take the
    command's defaults (for hetero="mag" the shape's own). Returns its figures: nodes,
    edges, split (train/valid/test counts), bytes_written, seconds; with hetero also
    type_nodes and relation_edges (per name)."""
    return _C.generate(_path(out), hetero=str(hetero), nodes=nodes, avg_degree=avg_degree,
                       feat_dim=feat_dim, classes=classes, seed=int(seed), homophily=homophily,
                       power_law=float(power_law), feature_noise=float(feature_noise),
                       train_fraction=float(train_fraction),
                       valid_fraction=float(valid_fraction),
                       test_fraction=float(test_fraction), threads=int(threads))


def partition(dataset, out, *, num_parts=2, method="metis", balance_train=False,
              balance_edges=False, undirected=False, reverse=True, split="", edge_split=None,
              seed=0, threads=0, feature_dtype="float32"):
    """`partita partition --dataset DATASET --out OUT ...`. reverse=False is --no-reverse;
    edge_split is "VALID,TEST" or a (valid, test) pair of fractions. Returns the summary
    partita.json records (num_nodes, num_edges, edge_cut, edge_cut_fraction, the
    imbalances, parts: a dict per part, edge_split or None, ...) and, as "text", the table
    the command prints."""
    if edge_split is None:
        edge_split = ""
    elif not isinstance(edge_split, str):
        edge_split = ",".join(repr(float(f)) for f in edge_split)
    return _C.partition(_path(dataset), _path(out), num_parts=int(num_parts), method=str(method),
                        balance_train=bool(balance_train), balance_edges=bool(balance_edges),
                        undirected=bool(undirected), reverse=bool(reverse), split=str(split),
                        edge_split=edge_split, seed=int(seed), threads=int(threads),
                        feature_dtype=str(feature_dtype))


def infer(parts, checkpoint, *, batch_size=4096, normalize_features=None, torch_threads=0,
          device="cpu", hits_k=50, timeout=60.0):
    """`partita infer`: layer-wise full-neighbourhood inference with the latest checkpoint
    of a `partita train` run (GraphSAGE, GCN, GAT; node or link models). Collective: under
    mpirun every rank calls it. `parts` is a partition directory (opened and closed here,
    `timeout` as DistGraph's) or an open partita.DistGraph.

    Returns a dict: embeddings (float32 tensor [N, H] in ORIGINAL node-id order, the last
    hidden layer, or a link model's encoder output; rank 0 only, None on the other ranks),
    predictions (int64 tensor [N], original order, every rank; None for a link model),
    test_acc, test_total, test_correct (node models), test_auc, test_ap, test_mrr, test_hits
    at hits_k (link models, rank 0), num_nodes, embedding_dim, normalize_features (as
    applied: None reapplies the checkpoint's record) and link. torch_threads > 0 sets
    torch's thread count for this call only (0: torch's setting). The same rows `partita infer`
    writes to embeddings.npy and predictions.npy. An R-GCN checkpoint raises UsageError
    (not supported yet), as the command does."""
    from . import DistGraph

    kw = dict(batch_size=int(batch_size), normalize_features=normalize_features,
              torch_threads=int(torch_threads), device=str(device), hits_k=int(hits_k))
    if isinstance(parts, _C.DistGraph):
        return _C.infer(parts, _path(checkpoint), **kw)
    with DistGraph(_path(parts), timeout=timeout) as graph:
        return _C.infer(graph, _path(checkpoint), **kw)


def command_path():
    """The `partita` binary of this package: the one pip installed inside it
    (partita/bin/partita), or in a build tree (PYTHONPATH=build/python) the build's
    src/cli/partita. Raises partita.Error when there is none."""
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, "bin", "partita"),
                      os.path.join(os.path.dirname(os.path.dirname(here)), "src", "cli",
                                   "partita")):
        if os.access(candidate, os.X_OK):
            return candidate
    raise _C.Error(f"no partita binary beside the package in {here} (install the package with "
                   "pip, or build the target partita)")
