"""Edge features in typed batches (issue 41): TypedNeighborLoader(..., edge_features=True)
gives every RelationBlock of every layer an edge_attr whose row j is the dataset's edge_feat
row of that relation block's edge j, found by brute force from the dataset's own files: the
relation, its source's and its destination's original (type-local) ids. The generated mag
graph lists some (source, destination) pairs twice in a relation; without edge_time such a
pair is one edge carrying its first listed row (docs/dataset-format.md), which is the row the
check expects. On 1 rank (1 part; 16-bit rows widened) and on 2 ranks under mpirun (2 parts,
counting the rows of edges stored by the other rank's part); None without edge_features;
refusals as UsageError."""
import os
import re
import shutil
import textwrap

import numpy as np
import pytest
import torch

import partita
from conftest import PARTITA, PYTHON, mpirun, run

EDGE_DIM = 3


@pytest.fixture(scope="module")
def typed_edge_parts(tmp_path_factory):
    """'ds': a generated mag graph with edge_feat (float32), 'ds16': the same with float16
    rows; {1, 2}: 'ds' in 1 and 2 parts, 'p16': 'ds16' in 1 part, 'plain': a typed 1-part
    dir without edge_feat."""
    base = tmp_path_factory.mktemp("typededge")
    gen = [PARTITA, "-q", "generate", "--hetero", "mag", "--nodes", "600", "--feat-dim", "4",
           "--classes", "3", "--seed", "7"]
    run(gen + ["--edge-feat-dim", str(EDGE_DIM), "--out", str(base / "ds")])
    run(gen + ["--out", str(base / "plain_ds")])
    shutil.copytree(base / "ds", base / "ds16")
    feat16 = base / "ds16" / "edge_feat"
    for name in os.listdir(feat16):
        rows = np.load(feat16 / name)
        np.save(feat16 / name, rows.astype(np.float16))
    out = {"ds": str(base / "ds"), "ds16": str(base / "ds16")}
    for key, ds, parts in ((1, "ds", 1), (2, "ds", 2), ("p16", "ds16", 1),
                           ("plain", "plain_ds", 1)):
        out[key] = str(base / f"parts_{key}")
        run([PARTITA, "-q", "partition", "--dataset", str(base / ds), "--num-parts", str(parts),
             "--seed", "1", "--out", out[key]])
    return out


CHECK = textwrap.dedent("""
    import json, os
    import numpy as np, torch, partita

    class DatasetRows:
        '''The edge_feat row of every (relation id, source, destination) edge of a typed
        partition, read from the dataset's files (type-local ids): a forward relation's first
        listed row of the pair, a reverse relation's that of the edge it reverses.'''

        def __init__(self, dataset, parts):
            schema = json.load(open(os.path.join(dataset, "hetero.json")))
            counts = {t["name"]: t["count"] for t in schema["node_types"]}
            self.offsets, at = {}, 0
            for t in schema["node_types"]:
                self.offsets[t["name"]] = at
                at += t["count"]
            self.relations = json.load(open(os.path.join(parts, "partita.json")))["hetero"][
                "relations"]
            self.forward = {}  # triplet file name -> (sorted keys, first row of each, rows, n_dst)
            for h, r, t in schema["relations"]:
                name = f"{h}___{r}___{t}"
                edges = np.load(os.path.join(dataset, "edges", name + ".npy"))
                rows = np.load(os.path.join(dataset, "edge_feat", name + ".npy"))
                keys = edges[:, 0] * counts[t] + edges[:, 1]
                unique, first = np.unique(keys, return_index=True)  # first listed row of a pair
                self.forward[(h, r, t)] = (unique, first, rows, counts[t])

        def rows(self, relation, src_original, dst_original):
            '''float32 rows of relation `relation`'s edges src -> dst (homogenised original
            ids), asserting each edge exists in the dataset.'''
            rel = self.relations[relation]
            src = src_original - self.offsets[rel["src"]]
            dst = dst_original - self.offsets[rel["dst"]]
            if rel["reverse"]:
                triplet = (rel["dst"], rel["name"][len("rev_"):], rel["src"])
                src, dst = dst, src
            else:
                triplet = (rel["src"], rel["name"], rel["dst"])
            unique, first, rows, n_dst = self.forward[triplet]
            keys = src * n_dst + dst
            at = np.searchsorted(unique, keys)
            assert (at < len(unique)).all() and (unique[np.minimum(at, len(unique) - 1)] ==
                                                 keys).all(), (rel["name"], "edge not in dataset")
            return torch.from_numpy(rows[first[at]].astype(np.float32))

    def check(dataset, parts, dim, host_local="auto"):
        '''Loops over the train split with and without edge_features; returns (edges checked,
        edges whose destination this rank does not own: rows another rank's part stores).'''
        truth = DatasetRows(dataset, parts)
        edges = remote = 0
        with partita.DistGraph(parts, edge_features=True, host_local=host_local) as g:
            node_map = torch.from_numpy(np.asarray(g.node_map))
            kw = dict(fanouts=[4, 3], batch_size=32, seed=2)
            loader = partita.NeighborLoader(g, edge_features=True, **kw)
            plain = partita.NeighborLoader(g, **kw)
            batches = list(zip(loader, plain))
            assert len(batches) == len(loader) > 1
            for batch, ref in batches:
                assert len(batch.blocks) == len(ref.blocks)
                for block, ref_block in zip(batch.blocks, ref.blocks):
                    for r, (s, _, d) in enumerate(block.edge_types):
                        rb, rr = block[r], ref_block[r]
                        assert rr.edge_attr is None
                        # Sampling with edge ids samples the same edges.
                        assert torch.equal(rb.edge_index, rr.edge_index)
                        a = rb.edge_attr
                        assert a.dtype == torch.float32 and tuple(a.shape) == (rb.num_edges, dim)
                        src = batch.n_id_dict[s][rb.indices]
                        dst = batch.n_id_dict[d][rb.edge_dst]
                        want = truth.rows(r, node_map[src].numpy(), node_map[dst].numpy())
                        assert torch.equal(a, want), (r, block.edge_types[r])
                        edges += rb.num_edges
                        remote += int(((dst < g.first_node) | (dst >= g.end_node)).sum())
        return edges, remote
""")


def check_scope():
    scope = {}
    exec(CHECK, scope)
    return scope


def test_relation_blocks_carry_edge_attr(typed_edge_parts):
    edges, remote = check_scope()["check"](typed_edge_parts["ds"], typed_edge_parts[1], EDGE_DIM)
    assert edges > 1000 and remote == 0, (edges, remote)


def test_float16_rows_are_widened(typed_edge_parts):
    """A float16 partition's rows come as float32, equal to the stored float16 values."""
    edges, _ = check_scope()["check"](typed_edge_parts["ds16"], typed_edge_parts["p16"],
                                      EDGE_DIM)
    assert edges > 1000, edges


@pytest.mark.parametrize("host_local", ["off", "auto"])
def test_relation_blocks_carry_edge_attr_on_two_ranks(typed_edge_parts, tmp_path, host_local):
    """host_local "off": the other part's rows come over the edge_features request, as
    between hosts; "auto": from its mapped file."""
    script = tmp_path / "check.py"
    script.write_text(CHECK + textwrap.dedent(f"""
        edges, remote = check({typed_edge_parts["ds"]!r}, {typed_edge_parts[2]!r}, {EDGE_DIM},
                              {host_local!r})
        assert edges > 300 and remote > 0, (edges, remote)
        print("edges checked", edges, "remote", remote, flush=True)
    """))
    out = mpirun(2, [PYTHON, str(script)])
    assert out.stdout.count("edges checked") == 2, out.stdout + out.stderr


def test_edge_features_refused(typed_edge_parts):
    plain = typed_edge_parts["plain"]
    with partita.DistGraph(plain, edge_features=True) as g:
        assert g.typed and g.edge_feat_dim == 0
        with pytest.raises(partita.UsageError,
                           match=rf"^NeighborLoader: edge_features: {re.escape(plain)} holds "
                                 r"no edge features \(partition a dataset with edge_feat/"):
            partita.NeighborLoader(g, fanouts=[2], edge_features=True)
    with partita.DistGraph(typed_edge_parts[1]) as g:
        with pytest.raises(partita.UsageError, match=r"edge_features=True"):
            partita.NeighborLoader(g, fanouts=[2], edge_features=True)
    with pytest.raises(partita.UsageError, match=r"^host_local: "):
        partita.DistGraph(typed_edge_parts[1], host_local="sometimes")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_edge_attr_delivered_on_the_device(typed_edge_parts):
    with partita.DistGraph(typed_edge_parts[1], edge_features=True) as g:
        kw = dict(fanouts=[4, 3], batch_size=32, seed=2, edge_features=True)
        for batch, ref in zip(partita.NeighborLoader(g, device="cuda", **kw),
                              partita.NeighborLoader(g, **kw)):
            for block, ref_block in zip(batch.blocks, ref.blocks):
                for r in range(len(block)):
                    a = block[r].edge_attr
                    assert a.device.type == "cuda"
                    assert torch.equal(a.cpu(), ref_block[r].edge_attr)
