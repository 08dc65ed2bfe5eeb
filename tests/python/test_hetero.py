"""Typed partitions from Python (heco-acm: author and paper with features, subject without;
4 relations with the reverses): the typed batches' structure against the partition's own
files, their blocks against the C++ sampler's for the same seeds and key (exactly), the
learned embeddings and their sparse optimizer against the C++ rules (bit for bit) on 2
ranks, and a short run of examples/python/train_mag_rgcn.py under mpirun."""
import json
import os
import re
import textwrap

import numpy as np
import pytest
import torch

import partita
from conftest import PARTITA, PYTHON, ROOT, mpirun, run

HECO_ACM = os.path.join(os.path.dirname(ROOT), "shared", "datasets", "ogb-layout", "heco-acm")
EXAMPLE = os.path.join(ROOT, "examples", "python", "train_mag_rgcn.py")


@pytest.fixture(scope="session")
def acm_parts(tmp_path_factory):
    """{1: <1-part dir>, 2: <2-part METIS dir>} of heco-acm, split heco60."""
    if not os.path.isdir(HECO_ACM):
        pytest.skip(f"{HECO_ACM} is missing")
    base = tmp_path_factory.mktemp("acm")
    out = {}
    for parts in (1, 2):
        d = str(base / f"p{parts}")
        run([PARTITA, "-q", "partition", "--dataset", HECO_ACM, "--split", "heco60",
             "--num-parts", str(parts), "--method", "metis", "--out", d])
        out[parts] = d
    return out


@pytest.fixture(scope="module")
def graph(acm_parts):
    g = partita.DistGraph(acm_parts[1])
    yield g
    g.close()


def part_arrays(g):
    part = os.path.join(g.dir, "part0")
    return {name: np.load(os.path.join(part, f"{name}.npy"), mmap_mode="r")
            for name in ("indptr", "indices", "etype", "label", "feat_author", "feat_paper")}


def test_schema(graph):
    assert graph.typed
    assert graph.node_types == ["author", "paper", "subject"]
    assert graph.type_feat_dims == [1902, 1902, 0]
    assert graph.node_types[graph.target_type] == "paper"
    assert [r[1] for r in graph.relations] == ["writes", "has_subject", "rev_writes",
                                               "rev_has_subject"]


def test_typed_batch_structure(graph):
    """Per type ids, positions and features equal the partition's rows; per relation each
    CSC is over the right types' local ids and together they are the block's edges."""
    arrays = part_arrays(graph)
    starts = np.cumsum([0] + [np.load(os.path.join(graph.dir, "part0", f"feat_{t}.npy"),
                                      mmap_mode="r").shape[0] for t in ("author", "paper")])
    type_start = {"author": starts[0], "paper": starts[1], "subject": starts[2]}
    loader = partita.NeighborLoader(graph, fanouts=[4, 3], batch_size=64, seed=5)
    assert isinstance(loader, partita.hetero.TypedNeighborLoader)
    assert len(loader) == 3  # 180 training papers
    seen = []
    for batch in loader:
        assert batch.global_size == batch.num_seeds
        seen += batch.seeds.tolist()
        assert batch.target_type == "paper"
        assert set(batch.x_dict) == {"author", "paper"}
        assert torch.equal(batch.y, torch.from_numpy(arrays["label"][batch.seeds.numpy()]))
        total = 0
        for t in batch.node_types:
            ids, pos = batch.n_id_dict[t], batch.pos_dict[t]
            assert torch.equal(batch.input_nodes[pos], ids)
            assert bool(((ids >= type_start[t]) & (ids < type_start[t] + 10**6)).all())
            total += ids.numel()
            if t in batch.x_dict:
                rows = arrays[f"feat_{t}"][(ids - int(type_start[t])).numpy()]
                assert torch.equal(batch.x_dict[t], torch.from_numpy(np.asarray(rows)))
        assert total == batch.input_nodes.numel()
        assert torch.equal(batch.blocks[0].src_nodes, batch.input_nodes)
        assert torch.equal(batch.blocks[-1].src_nodes[:batch.num_seeds], batch.seeds)
        for block in batch.blocks:
            assert sum(block.num_src_dict.values()) == block.num_src
            assert sum(block.num_dst_dict.values()) == block.num_dst
            src_of_type = {t: [] for t in batch.node_types}
            types = graph_types(block.src_nodes, type_start)
            for p, t in enumerate(types):
                src_of_type[t].append(int(block.src_nodes[p]))
            for t in batch.node_types:  # a type's src nodes are a prefix of its input nodes
                assert src_of_type[t] == batch.n_id_dict[t][:len(src_of_type[t])].tolist()
            edges = 0
            for r, (s, name, d) in enumerate(block.edge_types):
                rel = block[name]
                assert rel is not None and block[(s, name, d)].num_edges == rel.num_edges
                assert rel.num_src == block.num_src_dict[s]
                assert rel.num_dst == block.num_dst_dict[d]
                assert rel.indptr.numel() == rel.num_dst + 1 and int(rel.indptr[-1]) == rel.num_edges
                ei = rel.edge_index
                assert ei.shape == (2, rel.num_edges)
                if rel.num_edges:
                    assert int(ei[0].max()) < rel.num_src and int(ei[1].max()) < rel.num_dst
                edges += rel.num_edges
            assert edges == block.indices.numel()
    assert sorted(seen) == sorted(graph.train_ids.tolist())


def graph_types(ids, type_start):
    names = list(type_start)
    bounds = [type_start[t] for t in names]
    return [names[int(np.searchsorted(bounds, int(i), side="right")) - 1] for i in ids]


def split_by_relation(ref, types, schema_relations):
    """The per-relation CSCs of one raw sampled block, built here by brute force: for each
    relation, dst rows in block order, edges in block order, ids local to their type."""
    src_nodes = ref["src_nodes"].tolist()
    local, counters = [], {}
    for t in types:
        local.append(counters.get(t, 0))
        counters[t] = counters.get(t, 0) + 1
    out = []
    indptr, indices, etypes = ref["indptr"].tolist(), ref["indices"].tolist(), ref["etypes"].tolist()
    for r, (s, _, d) in enumerate(schema_relations):
        rows = [i for i in range(ref["num_dst"]) if types[i] == d]
        ptr, idx, dst = [0], [], []
        for i in rows:
            for e in range(indptr[i], indptr[i + 1]):
                if etypes[e] == r:
                    assert types[indices[e]] == s
                    idx.append(local[indices[e]])
                    dst.append(local[i])
            ptr.append(len(idx))
        out.append((ptr, idx, dst))
    assert len(src_nodes) == ref["num_src"]
    return out


@pytest.mark.parametrize("fanouts", [[5, 3], "4,rev_writes=2:-1"])
def test_typed_batches_equal_the_cpp_sampler(graph, acm_parts, fanouts):
    """Each batch's blocks are what BlockBuilder samples for its seeds under key (seed, epoch,
    step) (the C++ trainer's sampling), and the per-relation CSCs are those blocks' edges split
    by relation; the same with 2 sampler threads."""
    starts = np.cumsum([0] + [np.load(os.path.join(graph.dir, "part0", f"feat_{t}.npy"),
                                      mmap_mode="r").shape[0] for t in ("author", "paper")])
    type_start = {"author": starts[0], "paper": starts[1], "subject": starts[2]}
    names = graph.node_types
    triplets = [(names[s], r, names[d]) for s, r, d in graph.relations]
    text = fanouts if isinstance(fanouts, str) else ",".join(map(str, fanouts))
    loaders = [partita.NeighborLoader(graph, fanouts=fanouts, batch_size=50, seed=3, threads=k)
               for k in (1, 2)]
    for loader in loaders:
        loader.set_epoch(2)
    for batch, twin in zip(*loaders):
        ref = partita._C.sample_typed_blocks(graph, batch.seeds.tolist(), text, 3, 2, batch.step)
        assert len(ref) == len(batch.blocks) == 2
        for got, same, want in zip(batch.blocks, twin.blocks, ref):
            for key in ("src_nodes", "indptr", "indices", "etypes"):
                assert torch.equal(getattr(got, key), want[key]), key
                assert torch.equal(getattr(same, key), want[key]), key
            types = graph_types(want["src_nodes"], type_start)
            for r, (ptr, idx, dst) in enumerate(split_by_relation(want, types, triplets)):
                rel = got[r]
                assert rel.indptr.tolist() == ptr
                assert rel.indices.tolist() == idx
                assert rel.edge_dst.tolist() == dst


def test_typed_errors(graph, acm_parts):
    if not torch.cuda.is_available():  # a device this process cannot use, as NeighborLoader
        with pytest.raises(partita.UsageError, match=r"^device: cuda:7: "):
            partita.NeighborLoader(graph, fanouts=[2], device="cuda:7")
    with pytest.raises(partita.UsageError, match="fanouts"):
        partita.NeighborLoader(graph, fanouts="2,cites=3")
    with pytest.raises(partita.UsageError, match="opened without learned embeddings"):
        partita.DistEmbedding(graph, "subject", 8)
    with pytest.raises(partita.UsageError, match="has features"):
        partita.DistEmbedding(graph, "paper", 8)
    with pytest.raises(partita.UsageError, match="not a node type"):
        partita.DistEmbedding(graph, "venue", 8)
    # Refused before any collective (the graph is not opened).
    with pytest.raises(partita.UsageError, match="need a sparse_optimizer"):
        partita.DistGraph(acm_parts[1], embedding_dim=8)
    with pytest.raises(partita.UsageError, match="sparse_optimizer: a partita.SparseAdam"):
        partita.DistGraph(acm_parts[1], embedding_dim=8, sparse_optimizer="adam")
    with pytest.raises(partita.UsageError, match="lr: must be > 0"):
        partita.DistGraph(acm_parts[1], embedding_dim=8, sparse_optimizer=partita.SparseSGD(0))
    sparse = partita.SparseAdam(lr=0.1)
    with partita.DistGraph(acm_parts[1], embedding_dim=4, sparse_optimizer=sparse) as g2:
        with pytest.raises(partita.UsageError, match="already serves another DistGraph"):
            partita.DistGraph(acm_parts[1], embedding_dim=4, sparse_optimizer=sparse)
        emb = partita.DistEmbedding(g2, "subject", 4)
        starts = json.load(open(os.path.join(acm_parts[1], "partita.json")))["hetero"]
        assert emb.owned == tuple(starts["type_starts"][0][2:4])  # one part: every subject
        rows = emb(torch.tensor([emb.owned[0], emb.owned[0]]))
        assert rows.shape == (2, 4) and torch.equal(rows[0], rows[1]) and rows.requires_grad


EMBEDDING_SCRIPT = textwrap.dedent(r"""
    import sys
    import numpy as np, torch
    import partita
    two, one, kind = sys.argv[1], sys.argv[2], sys.argv[3]
    dim, steps = 6, 4
    make = {"adam": lambda: partita.SparseAdam(lr=0.05, betas=(0.8, 0.99), eps=1e-6),
            "adagrad": lambda: partita.SparseAdagrad(lr=0.1, eps=1e-7),
            "sgd": lambda: partita.SparseSGD(lr=0.3)}[kind]
    sparse = make()
    g = partita.DistGraph(two, embedding_dim=dim, sparse_optimizer=sparse, embedding_seed=11,
                          embedding_init=0.5)
    t = g.node_types.index("subject")
    emb = partita.DistEmbedding(g, "subject", dim)
    # Every subject id of the job (global ids), from the partition's per-part type ranges.
    import json, os
    meta = json.load(open(os.path.join(two, "partita.json")))["hetero"]
    ids = torch.tensor([i for p in meta["type_starts"] for i in range(p[t], p[t + 1])])
    with torch.no_grad():
        table = emb(ids).clone()            # the initial rows, looked up from both owners
    # Stored as the C++ trainer stores them: the same initial rows by original id as a
    # replicated 1-part graph opened with the same seed.
    g1 = partita.DistGraph(one, embedding_dim=dim, sparse_optimizer=make(), embedding_seed=11,
                           embedding_init=0.5)
    meta1 = json.load(open(os.path.join(one, "partita.json")))["hetero"]
    ids1 = torch.arange(meta1["type_starts"][0][t], meta1["type_starts"][0][t + 1])
    with torch.no_grad():
        rows1 = partita.DistEmbedding(g1, "subject", dim)(ids1)
    orig2, orig1 = g.node_map[ids.numpy()], g1.node_map[ids1.numpy()]
    assert sorted(orig2.tolist()) == sorted(orig1.tolist())
    by_orig = {o: r for o, r in zip(orig1.tolist(), rows1)}
    for o, r in zip(orig2.tolist(), table):
        assert torch.equal(by_orig[o], r), o
    g1.close()
    assert float(table.abs().max()) <= 0.5 and float(table.std()) > 0.1
    # The reference: each rank's gradients (ids with repeats, over both owners) summed per
    # id in input order, ranks summed in rank order, then one step of the C++ rule per row.
    ref = partita._C.RowOptimizer(kind, sparse.lr, sparse.betas[0], sparse.betas[1],
                                  sparse.eps, len(ids), dim)
    row_of = {int(i): k for k, i in enumerate(ids)}
    for step in range(steps):
        per_rank = []
        for r in range(g.world_size):
            gen = torch.Generator().manual_seed(100 * step + r)
            pick = ids[torch.randint(0, len(ids), (9,), generator=gen)]
            weights = torch.randn(9, dim, generator=gen)
            per_rank.append((pick, weights))
        pick, weights = per_rank[g.rank]
        rows = emb(pick)
        (rows * weights).sum().backward()    # d/d rows = weights
        sparse.step()
        sums = {}
        for pick_r, w_r in per_rank:
            mine = {}
            for i, w in zip(pick_r.tolist(), w_r):
                mine[i] = mine[i] + w if i in mine else w.clone()
            for i, w in mine.items():
                sums[i] = sums[i] + w if i in sums else w
        rows_ref = torch.tensor(sorted(row_of[i] for i in sums))
        grads = torch.stack([sums[int(ids[k])] for k in rows_ref.tolist()])
        ref.step(table, rows_ref, grads)
        with torch.no_grad():
            now = emb(ids)
        assert torch.equal(now, table), (step, (now - table).abs().max())
    # A second, wrong dim and a closed graph are refused.
    try:
        partita.DistEmbedding(g, "subject", dim + 1)
        raise SystemExit("a wrong dim was accepted")
    except partita.UsageError as e:
        assert "embedding_dim" in str(e)
    rank = g.rank
    g.close()
    try:
        emb(ids)
        raise SystemExit("a lookup on a closed graph was accepted")
    except partita.UsageError as e:
        assert "closed" in str(e)
    if rank == 0:
        print("embeddings ok")
""")


@pytest.mark.parametrize("kind", ["adam", "adagrad", "sgd"])
def test_dist_embedding_and_sparse_optimizer_equal_the_cpp_rules(acm_parts, scratch, kind):
    """2 ranks, 2 parts: initial rows equal a replicated 1-part graph's by original id; after
    each of 4 steps of gradients from both ranks (repeated ids, rows of both owners), every
    row equals the C++ sparse optimizer's update of the summed gradients, bit for bit."""
    script = scratch / "emb.py"
    script.write_text(EMBEDDING_SCRIPT)
    out = mpirun(2, [PYTHON, str(script), acm_parts[2], acm_parts[1], kind])
    assert "embeddings ok" in out.stdout


def test_reference_rule_is_the_documented_adam():
    """RowOptimizer (the reference above) is optim/sparse_optimizer.h's lazy Adam with a
    per-row step counter: checked against the formula in float64 (to float32 rounding)."""
    lr, b1, b2, eps = 0.05, 0.8, 0.99, 1e-6
    opt = partita._C.RowOptimizer("adam", lr, b1, b2, eps, 3, 2)
    table = torch.tensor([[0.5, -0.25], [1.0, 2.0], [0.0, 0.1]])
    x = table.double().clone()
    m, v, t = torch.zeros(3, 2).double(), torch.zeros(3, 2).double(), [0, 0, 0]
    for rows, g in [([0, 2], [[0.1, -0.2], [0.3, 0.4]]), ([2], [[-1.0, 0.5]])]:
        grads = torch.tensor(g)
        opt.step(table, torch.tensor(rows), grads)
        for k, r in enumerate(rows):
            t[r] += 1
            gd = grads[k].double()
            m[r] = b1 * m[r] + (1 - b1) * gd
            v[r] = b2 * v[r] + (1 - b2) * gd * gd
            x[r] -= lr * (m[r] / (1 - b1 ** t[r])) / ((v[r] / (1 - b2 ** t[r])).sqrt() + eps)
    assert torch.allclose(table.double(), x, rtol=1e-6, atol=1e-7)
    assert torch.equal(table[1], torch.tensor([1.0, 2.0]))  # no gradient: unchanged


def test_example_learns_under_mpirun(acm_parts):
    """examples/python/train_mag_rgcn.py on 2 ranks, 2 parts, 20 epochs: it trains (the loss
    falls) and its test accuracy is far above what an untrained model gets (3 classes, the
    largest a third of the test ids). Seeds 0, 1 and 2 give 0.802, 0.834 and 0.863 (100
    epochs: 0.905, 0.891, 0.896): bench/python_examples.py --groups mag_rgcn."""
    out = mpirun(2, [PYTHON, EXAMPLE, "--parts", acm_parts[2], "--epochs", "20", "--seed", "1"],
                 timeout=300).stdout
    lines = out.strip().splitlines()
    assert lines[-1].startswith("test_acc=")
    losses = [float(m) for m in re.findall(r"loss=([0-9.]+)", out)]
    assert len(losses) == 20 and losses[-1] < 0.5 * losses[0]
    assert float(lines[-1].split("=")[1]) >= 0.75


def test_typed_loader_stops_with_its_graph(acm_parts):
    """A typed loop left mid-epoch keeps its 2 sampler threads until its graph closes; then
    they are joined and the loader raises partita.UsageError, as the homogeneous loader."""
    g = partita.DistGraph(acm_parts[1])
    loader = partita.NeighborLoader(g, fanouts=[5, 5], batch_size=16, threads=2)
    before = len(os.listdir("/proc/self/task"))
    it = iter(loader)
    next(it)
    during = len(os.listdir("/proc/self/task"))
    assert during == before + 2
    g.close()
    assert len(os.listdir("/proc/self/task")) <= before
    with pytest.raises(partita.UsageError, match="DistGraph is closed"):
        next(it)
    with pytest.raises(partita.UsageError, match="DistGraph is closed"):
        list(loader)


TWO_RANK_BATCHES = textwrap.dedent(r"""
    import sys
    import torch
    import partita
    with partita.DistGraph(sys.argv[1]) as g:
        loader = partita.NeighborLoader(g, fanouts=[6, 4], batch_size=40, seed=9, threads=2)
        steps = seeds = 0
        for batch in loader:
            steps += 1
            seeds += batch.num_seeds
            if batch.num_seeds == 0:
                assert batch.blocks == []
                continue
            ref = partita._C.sample_typed_blocks(g, batch.seeds.tolist(), "6,4", 9, 0, batch.step)
            for got, want in zip(batch.blocks, ref):
                for key in ("src_nodes", "indptr", "indices", "etypes"):
                    assert torch.equal(getattr(got, key), want[key]), key
                assert sum(got[r].num_edges for r in range(len(got))) == want["indices"].numel()
        total = partita.allreduce(torch.tensor([seeds]), g)
        assert steps == len(loader) == 5 and int(total) == 180, (steps, int(total))
        if g.rank == 0:
            print("two ranks ok")
""")


def test_typed_batches_on_two_ranks_equal_the_cpp_sampler(acm_parts, scratch):
    """2 ranks, 2 parts (remote sampling and fetching): every rank runs every step, the
    ranks' seeds add up to the 180 training papers, and each batch's blocks equal what the
    distributed BlockBuilder samples for its seeds under the same key."""
    script = scratch / "two.py"
    script.write_text(TWO_RANK_BATCHES)
    out = mpirun(2, [PYTHON, str(script), acm_parts[2]])
    assert "two ranks ok" in out.stdout
