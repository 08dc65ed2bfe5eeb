"""Typed (heterogeneous) batches and learned embeddings (docs/python.md, "Typed partitions").

On a typed partition `partita.NeighborLoader` yields HeteroBatch objects: per node type the
input nodes (features, or ids to look up in a DistEmbedding), per layer one HeteroBlock
whose relations are CSC blocks over per-type local ids (DGL's heterograph blocks; PyG's
edge_index_dict). Sampling and fetching run in the C++ pipeline of `partita train --model
rgcn`, with the GIL released while Python waits for a batch.

Learned embeddings of featureless types live in the graph's session, as the C++ trainer
keeps them: open the graph with `embedding_dim` and a sparse optimizer, then

    sparse = partita.SparseAdam(lr=0.02)
    with partita.DistGraph(parts, embedding_dim=64, sparse_optimizer=sparse) as g:
        emb = partita.DistEmbedding(g, "subject", 64)
        ...
        rows = emb(batch.n_id_dict["subject"])     # looked up from their owners
        loss.backward()                             # rows' gradients kept for step()
        partita.allreduce_gradients(model, g); opt.step()
        sparse.step()                               # every rank, every step (collective)
"""
import weakref

import torch

from . import _C
from ._loops import PipelineLoops

__all__ = ["TypedNeighborLoader", "HeteroBatch", "HeteroBlock", "DistEmbedding", "SparseAdam",
           "SparseAdagrad", "SparseSGD"]


class _Schema:
    """Node type and relation names of a typed graph, resolved once per loader."""

    def __init__(self, graph):
        self.node_types = list(graph.node_types)
        self.type_feat_dims = list(graph.type_feat_dims)
        self.target_type = self.node_types[graph.target_type]
        self.triplets = [(self.node_types[s], name, self.node_types[d])
                         for s, name, d in graph.relations]
        self.relation_index = {}
        for r, (s, name, d) in enumerate(self.triplets):
            self.relation_index[name] = r
            self.relation_index[(s, name, d)] = r
        self.featured = [t for t, dim in zip(self.node_types, self.type_feat_dims) if dim > 0]
        self.featureless = [t for t, dim in zip(self.node_types, self.type_feat_dims) if dim == 0]


class HeteroBlock:
    """One layer of a typed batch. Per node type t its src nodes are the block's src nodes of
    type t in block order (num_src_dict[t]), the first num_dst_dict[t] of them its dst nodes
    (as DGL's blocks); block[rel] (a relation name, an (src, rel, dst) triplet or a relation
    id) is that relation's RelationBlock: num_src, num_dst, indptr [num_dst + 1] and indices
    [E] (CSC over the dst type's dst nodes, src ids local to the src type), edge_dst,
    edge_index [2, E] (row 0 src, row 1 dst), and edge_attr (float32 [E, edge_feat_dim]: each
    edge's edge_feat row, aligned with indices; None unless the loader was made with
    edge_features=True). The homogeneous form stays available:
    src_nodes (global ids, dst first), indptr, indices and etypes (relation per edge)."""

    __slots__ = ("_c", "_schema", "num_src_dict", "num_dst_dict")

    def __init__(self, block, schema):
        self._c = block
        self._schema = schema
        self.num_src_dict = dict(zip(schema.node_types, block.type_src))
        self.num_dst_dict = dict(zip(schema.node_types, block.type_dst))

    def __getitem__(self, relation):
        if not isinstance(relation, int):
            if relation not in self._schema.relation_index:
                raise KeyError(f"{relation!r} is not a relation of the graph (relations: "
                               f"{[t[1] for t in self._schema.triplets]})")
            relation = self._schema.relation_index[relation]
        return self._c.relations[relation]

    def __len__(self):
        return len(self._schema.triplets)

    @property
    def edge_types(self):
        """(src_type, relation, dst_type) triplets, in relation id order."""
        return list(self._schema.triplets)

    @property
    def edge_index_dict(self):
        """{(src_type, relation, dst_type): edge_index [2, E]} (PyG's HeteroData form)."""
        return {t: r.edge_index for t, r in zip(self._schema.triplets, self._c.relations)}

    num_src = property(lambda self: self._c.num_src)
    num_dst = property(lambda self: self._c.num_dst)
    src_nodes = property(lambda self: self._c.src_nodes)
    indptr = property(lambda self: self._c.indptr)
    indices = property(lambda self: self._c.indices)
    etypes = property(lambda self: self._c.etypes)


class HeteroBatch:
    """One typed mini-batch of this rank.

    - seeds (global ids of the target type), y (their labels), global_size (seeds of the
      whole global batch: divide a summed loss by it), num_seeds, step, sample_s, fetch_s.
    - input_nodes: every input node (global ids); per type: n_id_dict[t] (global ids, in the
      order of blocks[0]'s src nodes of type t), pos_dict[t] (their positions in
      input_nodes), x_dict[t] (float32 [n, feat_dim], featured types only). A featureless
      type's rows come from its DistEmbedding: emb(batch.n_id_dict[t]).
    - blocks: one HeteroBlock per layer, input layer first (blocks[-1]'s target-type dst
      nodes are the seeds); empty when this rank has no seeds in the step.
    """

    __slots__ = ("_c", "node_types", "target_type", "x_dict", "n_id_dict", "pos_dict", "blocks")

    def __init__(self, batch, schema):
        self._c = batch
        self.node_types = schema.node_types
        self.target_type = schema.target_type
        self.n_id_dict = dict(zip(schema.node_types, batch.type_ids))
        self.pos_dict = dict(zip(schema.node_types, batch.type_positions))
        self.x_dict = {t: x for t, x in zip(schema.node_types, batch.type_x) if x is not None}
        self.blocks = [HeteroBlock(b, schema) for b in batch.blocks]

    seeds = property(lambda self: self._c.seeds)
    y = property(lambda self: self._c.y)
    input_nodes = property(lambda self: self._c.input_nodes)
    global_size = property(lambda self: self._c.global_size)
    step = property(lambda self: self._c.step)
    sample_s = property(lambda self: self._c.sample_s)
    fetch_s = property(lambda self: self._c.fetch_s)
    num_seeds = property(lambda self: self._c.seeds.size(0))


class TypedNeighborLoader(PipelineLoops):
    """partita.NeighborLoader on a typed partition (NeighborLoader returns one): the batches of
    `partita train --model rgcn` with the same fanouts, batch size and seed, as HeteroBatch.

    fanouts: one int per hop (N per incoming relation, -1: all) or the text of `partita train
    --fanouts`, e.g. "25,writes=10:20". device: where every tensor of a batch is delivered,
    as for the homogeneous loader (pinned memory, a side stream the current stream waits
    for). edge_features: every RelationBlock's edge_attr is the float32 [E, edge_feat_dim]
    rows of its edges' edge_feat (a float16/bfloat16 partition's rows widened), remote rows
    fetched from their owners as node features are; the graph must be opened with
    DistGraph(..., edge_features=True) and hold edge_feat (partita.UsageError otherwise)."""

    def __init__(self, graph, fanouts=(10, 10), batch_size=1024, split="train", shuffle=True,
                 seed=0, prefetch=2, threads=1, device="cpu", edge_features=False):
        text = fanouts if isinstance(fanouts, str) else ",".join(str(int(k)) for k in fanouts)
        self._c = _C.TypedLoader(graph, text, int(batch_size), str(split), bool(shuffle),
                                 int(seed), int(prefetch), int(threads), str(device),
                                 bool(edge_features))
        self._schema = _Schema(graph)
        self.graph = graph
        self.fanouts = fanouts
        self.batch_size = batch_size
        self.device = torch.device(str(device))

    @property
    def num_ids(self):
        return self._c.num_ids

    @property
    def node_types(self):
        return list(self._schema.node_types)

    @property
    def edge_types(self):
        return list(self._schema.triplets)

    def _wrap(self, batch):
        return HeteroBatch(batch, self._schema)


def _type_index(graph, node_type):
    names = list(graph.node_types)
    if isinstance(node_type, int):
        return node_type
    if node_type not in names:
        raise _C.UsageError(f"DistEmbedding: '{node_type}' is not a node type of the graph "
                            f"(types: {', '.join(names)})")
    return names.index(node_type)


class DistEmbedding:
    """The learned embedding rows of one featureless node type, stored distributed as the C++
    trainer stores them (store/dist_embedding.h): part p's rows on the rank of part p, initial
    rows uniform in [-embedding_init, embedding_init) keyed by (embedding_seed, table, original
    id). The graph must be opened with embedding_dim == dim and a sparse optimizer.

    emb(ids) returns the rows of `ids` (float32 [n, dim] on `device`, a leaf that requires
    grad while grad mode is on); after backward their gradients wait here until the graph's sparse
    optimizer's step() sends them to the rows' owners and applies them."""

    def __init__(self, graph, node_type, dim, device="cpu"):
        self.node_type = node_type
        self.device = torch.device(str(device))
        self._table = _C.EmbeddingTable(graph, _type_index(graph, node_type))
        if self._table.dim != int(dim):
            raise _C.UsageError(f"DistEmbedding: dim {dim}, but the graph's tables have "
                                f"{self._table.dim} columns (DistGraph's embedding_dim)")
        self.dim = int(dim)
        self._looked_up = []  # (ids, rows) of lookups since the last step, for their grads
        optimizer = getattr(graph, "_sparse_optimizer", None)
        if optimizer is not None:
            optimizer._embeddings.append(weakref.ref(self))

    def __call__(self, ids):
        ids = torch.as_tensor(ids, dtype=torch.int64)
        rows = self._table.lookup(ids)
        if self.device.type != "cpu":
            rows = rows.to(self.device)
        if torch.is_grad_enabled():
            rows.requires_grad_(True)
            self._looked_up.append((ids, rows))
        return rows

    @property
    def owned(self):
        """[begin, end): the global ids whose rows this rank holds."""
        return self._table.owned

    def _push_gradients(self):
        for ids, rows in self._looked_up:
            if rows.grad is not None and ids.numel() > 0:
                self._table.push(ids, rows.grad)
        self._looked_up = []

    def zero_grad(self):
        """Forgets the gradients of the lookups since the last step."""
        self._looked_up = []


class _SparseOptimizer:
    """A sparse optimizer of a graph's learned embeddings: pass it to DistGraph(...,
    sparse_optimizer=...) (the rule is fixed when the tables are made), then call step()
    on every rank after every training step (collective: a rank without seeds calls it too)."""

    kind = None

    def __init__(self, lr, betas=(0.9, 0.999), eps=1e-8):
        self.lr = float(lr)
        self.betas = (float(betas[0]), float(betas[1]))
        self.eps = float(eps)
        # Weak: the graph holds its optimizer, and neither may keep the other (nor the
        # embeddings, whose tables keep the graph) alive in a cycle, so that a graph is freed,
        # and MPI finalized, when the script drops it.
        self._graph = None
        self._embeddings = []  # weakref.ref of each DistEmbedding, in creation order

    def _bind(self, graph):
        self._graph = weakref.ref(graph)  # _graph_args checked that it serves no other graph
        graph._sparse_optimizer = self

    def step(self):
        """Sends every DistEmbedding's gradients to the rows' owners, then every owner
        applies them (the sum over ranks in rank order, then one optimizer step per row), as
        the C++ trainer does after its gradient allreduce. Collective."""
        g = self._graph() if self._graph is not None else None
        if g is None:
            raise _C.UsageError(f"{type(self).__name__}: not attached to a graph (pass it to "
                                "partita.DistGraph(..., sparse_optimizer=...))")
        for emb in self._live_embeddings():
            emb._push_gradients()
        g.barrier()  # every push of the step has arrived at its owner
        for t, dim in enumerate(g.type_feat_dims):
            if dim == 0:
                _C.EmbeddingTable(g, t).apply_pending()
        g.barrier()  # no rank looks rows up while another still applies

    def zero_grad(self):
        for emb in self._live_embeddings():
            emb.zero_grad()

    def _live_embeddings(self):
        return [e for e in (ref() for ref in self._embeddings) if e is not None]


class SparseAdam(_SparseOptimizer):
    """Lazy Adam with a per-row step counter (DGL's SparseAdam; optim/sparse_optimizer.h)."""
    kind = "adam"


class SparseAdagrad(_SparseOptimizer):
    """Adagrad: s += g*g; x -= lr g / (sqrt(s) + eps) (optim/sparse_optimizer.h)."""
    kind = "adagrad"

    def __init__(self, lr, eps=1e-8):
        super().__init__(lr, eps=eps)


class SparseSGD(_SparseOptimizer):
    """x -= lr g on the rows with a gradient."""
    kind = "sgd"

    def __init__(self, lr):
        super().__init__(lr)


def _graph_args(embedding_dim, sparse_optimizer, embedding_seed, embedding_init):
    """The embedding arguments of _C.DistGraph's constructor."""
    o = sparse_optimizer if sparse_optimizer is not None else SparseAdam(lr=0.01)
    if embedding_dim and sparse_optimizer is None:
        raise _C.UsageError("embedding_dim: learned embeddings need a sparse_optimizer "
                            "(e.g. partita.SparseAdam(lr=0.02))")
    if not isinstance(o, _SparseOptimizer):
        raise _C.UsageError("sparse_optimizer: a partita.SparseAdam, SparseAdagrad or SparseSGD")
    if o._graph is not None and o._graph() is not None:
        raise _C.UsageError(f"sparse_optimizer: this {type(o).__name__} already serves another "
                            "DistGraph (make one per graph)")
    return (int(embedding_dim), o.kind, o.lr, o.betas[0], o.betas[1], o.eps, int(embedding_seed),
            float(embedding_init))
