"""Partita's data path for models written in PyTorch (docs/python.md).

    import partita
    with partita.DistGraph("parts/cora-2") as g:            # under mpirun: one rank per part
        model = MyModel(g.feat_dim, 64, g.num_classes)
        partita.broadcast_parameters(model, g)                # every rank: rank 0's weights
        loader = partita.NeighborLoader(g, fanouts=[10, 10], batch_size=1024)
        for batch in loader:                                  # an epoch; the next loop: the next
            out = model(batch.blocks, batch.x)                # blocks: input layer first
            loss = F.cross_entropy(out, batch.y, reduction="sum") / batch.global_size
            loss.backward()
            partita.allreduce_gradients(model, g)             # sums over ranks: exact mean
            opt.step(); opt.zero_grad()

The sampling, the remote fetching and MPI run in C++ threads; Python waits only for a
batch that is not ready yet (with the GIL released).
"""
import atexit
import weakref

import torch  # noqa: F401  (loads libtorch before the extension)

from . import _C
from ._C import Error, FormatError, IoError, UsageError  # noqa: F401
from . import nn  # noqa: F401
from ._loops import PipelineLoops
from .link import LinkEvalLoader, LinkNeighborLoader, link_metrics  # noqa: F401
from . import hetero  # DistGraph and NeighborLoader call into it
from .hetero import DistEmbedding, SparseAdagrad, SparseAdam, SparseSGD  # noqa: F401

__all__ = ["init", "finalize", "rank", "world_size", "DistGraph", "NeighborLoader",
           "broadcast_parameters", "allreduce_gradients", "allreduce", "Error", "UsageError",
           "FormatError", "IoError", "nn", "DistEmbedding", "SparseAdam", "SparseAdagrad",
           "SparseSGD"]
__all__ += ["LinkNeighborLoader", "LinkEvalLoader", "link_metrics"]  # partita/link.py

_open_graphs = []


def init():
    """Starts MPI in this process (under mpirun: on every rank). Called by DistGraph when
    needed; returns a context manager that finalizes on exit."""
    _C.init()
    return _Job()


class _Job:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        finalize()
        return False

    @property
    def rank(self):
        return _C.rank()

    @property
    def world_size(self):
        return _C.world_size()


def finalize():
    """Closes every open DistGraph (collective) and lets MPI finalize."""
    while _open_graphs:
        _open_graphs.pop().close()
    _C.finalize()


def rank():
    return _C.rank()


def world_size():
    return _C.world_size()


atexit.register(finalize)


class DistGraph(_C.DistGraph):
    """One rank's view of a partition directory: maps this rank's part and serves it to the
    other ranks (worker mode). Collective to open and to close; a context manager."""

    def __init__(self, parts_dir, timeout=60.0, in_memory=False, embedding_dim=0,
                 sparse_optimizer=None, embedding_seed=0, embedding_init=1.0,
                 edge_features=False, host_local="auto"):
        # embedding_*, sparse_optimizer: learned embeddings of a typed partition (hetero.py).
        # edge_features: the sampler returns edge ids, so that loaders can fetch edge
        # features (NeighborLoader(..., edge_features=True)); the same on every rank.
        # host_local: "auto" reads the parts of ranks on this host from their mapped files,
        # "off" requests every remote row as between hosts (partita train --host-local).
        super().__init__(str(parts_dir), float(timeout), bool(in_memory),
                         *hetero._graph_args(embedding_dim, sparse_optimizer, embedding_seed,
                                             embedding_init),
                         edge_features=bool(edge_features), host_local=str(host_local))
        if sparse_optimizer is not None:
            sparse_optimizer._bind(self)
        _open_graphs.append(self)

    def close(self):
        """Stops this graph's loaders (joining their threads), then ends the session on every
        rank (collective). A loader of a closed graph raises UsageError."""
        if self in _open_graphs:
            _open_graphs.remove(self)
        super().close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    @property
    def train_ids(self):
        return self.ids("train")

    @property
    def valid_ids(self):
        return self.ids("valid")

    @property
    def test_ids(self):
        return self.ids("test")


class NeighborLoader(PipelineLoops):
    """Mini-batches of a split, sampled and fetched by Partita's C++ pipeline.

    Every rank runs len(loader) steps per epoch (one global plan: a (seed, epoch) shuffle of
    every id of the split, cut into global batches of batch_size seeds, each rank taking
    the ids it owns), exactly the batches of `partita train` with the same flags. Each
    `for` loop over the loader is one epoch: 0, then 1, ...; set_epoch(e) picks the next.
    """

    def __new__(cls, graph, *args, **kwargs):
        if cls is NeighborLoader and getattr(graph, "typed", False):
            return hetero.TypedNeighborLoader(graph, *args, **kwargs)  # typed batches
        return super().__new__(cls)

    def __init__(self, graph, fanouts=(10, 10), batch_size=1024, split="train", shuffle=True,
                 seed=0, prefetch=2, threads=1, device="cpu", edge_features=False):
        # device: "cpu", "cuda", "cuda:N" or a torch.device; every tensor of a batch (x, y,
        # blocks, ids) is delivered there, copied through pinned memory on a side stream that
        # the current stream waits for. An unusable device raises partita.UsageError.
        # edge_features: every block's edge_attr is the float32 [edges, edge_feat_dim] rows
        # of its edges' edge_feat (None without; on a typed partition every RelationBlock's,
        # hetero.TypedNeighborLoader); the graph must be opened with edge_features=True and
        # hold edge_feat.
        self._c = _C.NeighborLoader(graph, [int(k) for k in fanouts], int(batch_size),
                                    str(split), bool(shuffle), int(seed), int(prefetch),
                                    int(threads), str(device), bool(edge_features))
        self.device = torch.device(str(device))
        self.graph = graph
        self.fanouts = list(fanouts)
        self.batch_size = batch_size

    @property
    def num_ids(self):
        return self._c.num_ids


def broadcast_parameters(model, graph, root=0):
    """Copies rank `root`'s parameters and buffers into the model on every rank, in place
    (collective: every rank calls it with the same architecture). Call it after building
    the model (and loading any weights on rank `root`), before the first step: then every
    rank trains the same model. Buffers that the forward updates (BatchNorm's running
    statistics) drift apart again while training; call it again to share rank `root`'s."""
    tensors = list(model.parameters()) + list(model.buffers())
    # MPI reads host memory: tensors on a GPU travel through host copies.
    hosts = [_on_host(t.detach()) for t in tensors]
    graph.broadcast_(hosts, int(root))
    with torch.no_grad():
        for t, h in zip(tensors, hosts):
            if h.data_ptr() != t.data_ptr():
                t.copy_(h)


def _on_host(t):
    """`t` itself on the CPU; else a contiguous host copy (pinned when CUDA is there), as the
    C++ trainer stages device buffers for MPI (Open MPI is not assumed CUDA-aware)."""
    if t.device.type == "cpu":
        return t
    # One copy, straight into (pinned) host memory.
    host = torch.empty(t.shape, dtype=t.dtype, pin_memory=torch.cuda.is_available())
    return host.copy_(t)


# Models whose parameters were found equal on every rank (first allreduce_gradients).
_agreed = weakref.WeakSet()


def allreduce_gradients(model, graph, bucket_bytes=4 << 20):
    """Sums every parameter's gradient over the ranks, in buckets as the C++ trainer does
    (parameters without a gradient contribute zeros). With a loss divided by the global
    batch size this gives the exact gradient of the mean over the global batch.

    The first call for a model checks that every rank holds the same parameters (a hash of
    their bytes, compared over the ranks) and raises partita.Error if not: each rank would
    train a different model. partita.broadcast_parameters(model, graph) makes them equal."""
    if model not in _agreed:
        if not graph.tensors_agree([_on_host(p.detach()) for p in model.parameters()]):
            raise Error("allreduce_gradients: the model's parameters differ between the ranks, "
                        "so each rank would train a different model; call "
                        "partita.broadcast_parameters(model, graph) after building the model "
                        "(every rank then starts from rank 0's weights)")
        _agreed.add(model)
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        return
    flat = torch.cat([(p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1)
                      .to(torch.float32) for p in params]).contiguous()
    host = _on_host(flat)
    graph.allreduce_(host, bucket_bytes)
    if host.data_ptr() != flat.data_ptr():
        flat.copy_(host)
    offset = 0
    for p in params:
        n = p.numel()
        g = flat[offset:offset + n].view_as(p).to(p.dtype)
        if p.grad is None:
            p.grad = g.clone()
        else:
            p.grad.copy_(g)
        offset += n


def allreduce(tensor, graph):
    """Sums a contiguous CPU float32/float64/int64 tensor over the ranks, in place."""
    graph.allreduce_(tensor)
    return tensor

from . import tools  # noqa: E402  generate, partition, infer, command_path, __version__
from .tools import *  # noqa: E402,F401,F403
__all__ += tools.__all__
