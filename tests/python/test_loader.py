"""The package in one process (one rank, a 1-part Cora): the graph's figures, the loader's
plan and batches against BlockBuilder and the dataset's own edges, the layers' autograd,
and C++ errors as Python exceptions with the command line's messages."""
import json
import math
import os
import shutil
import time

import numpy as np
import pytest
import torch

import partita
from conftest import CORA, PARTITA, PYTHON, run


@pytest.fixture(scope="module")
def graph(cora_parts):
    g = partita.DistGraph(cora_parts[1])
    yield g
    g.close()


def cora_in_neighbours(g):
    """Every node's in-neighbours in global ids, from the partition's own files (the
    graph as partitioned: symmetric, no self loops, no duplicates)."""
    part = os.path.join(g.dir, "part0")
    indptr = np.load(os.path.join(part, "indptr.npy"))
    indices = np.load(os.path.join(part, "indices.npy"))
    return [set(indices[indptr[v]:indptr[v + 1]].tolist()) for v in range(g.num_nodes)]


def test_graph_figures(graph):
    meta = json.load(open(os.path.join(graph.dir, "partita.json")))
    assert graph.num_nodes == meta["num_nodes"] == 2708
    assert graph.feat_dim == 1433 and graph.num_classes == 7
    assert graph.num_parts == 1 and graph.rank == 0 and graph.world_size == 1
    assert sorted(graph.node_map.tolist()) == list(range(2708))
    assert len(graph.train_ids) == 140 and len(graph.valid_ids) == 500
    assert len(graph.test_ids) == 1000
    assert np.all(np.diff(graph.train_ids) > 0)


def test_plan_and_batches(graph):
    loader = partita.NeighborLoader(graph, fanouts=[5, 3], batch_size=64, seed=7)
    assert len(loader) == math.ceil(140 / 64) == loader.num_ids // 64 + 1
    seen, sizes = [], []
    for batch in loader:
        assert batch.global_size == len(batch.seeds) == batch.num_seeds
        sizes.append(batch.num_seeds)
        seen += batch.seeds.tolist()
        assert batch.x.dtype == torch.float32 and batch.x.shape == (len(batch.input_nodes), 1433)
        assert batch.y.dtype == torch.int64 and batch.y.shape == (batch.num_seeds,)
        # Input layer first: blocks[0].src are the input nodes, blocks[-1].dst the seeds.
        assert torch.equal(batch.blocks[0].src_nodes, batch.input_nodes)
        assert torch.equal(batch.blocks[-1].src_nodes[:batch.num_seeds], batch.seeds)
        for lower, upper in zip(batch.blocks, batch.blocks[1:]):
            assert torch.equal(lower.src_nodes[:lower.num_dst], upper.src_nodes)
    assert sizes == [64, 64, 12]
    assert sorted(seen) == sorted(graph.train_ids.tolist())


def test_batches_equal_block_builder_and_the_graph(graph):
    """Each batch is what BlockBuilder samples for its seeds under key (seed, epoch, step),
    and every block edge is an edge of the graph, at most `fanout` per row."""
    neighbours = cora_in_neighbours(graph)
    fanouts = [4, 2]
    loader = partita.NeighborLoader(graph, fanouts=fanouts, batch_size=50, seed=3)
    loader.set_epoch(5)
    for batch in loader:
        ref = partita._C.sample_blocks(graph, batch.seeds.tolist(), fanouts, 3, 5, batch.step)
        assert len(ref) == len(batch.blocks) == 2
        for got, want, fanout in zip(batch.blocks, ref, reversed(fanouts)):
            assert torch.equal(got.src_nodes, want.src_nodes)
            assert torch.equal(got.indptr, want.indptr)
            assert torch.equal(got.indices, want.indices)
            src, dst = got.edge_index
            gsrc, gdst = got.src_nodes[src], got.src_nodes[dst]
            for s, d in zip(gsrc.tolist(), gdst.tolist()):
                assert s in neighbours[d]
            counts = torch.bincount(dst, minlength=got.num_dst)
            assert int(counts.max()) <= fanout
            assert torch.equal(got.indptr[1:] - got.indptr[:-1], counts)


def test_full_fanout_takes_every_in_neighbour(graph):
    neighbours = cora_in_neighbours(graph)
    loader = partita.NeighborLoader(graph, fanouts=[-1], batch_size=140, shuffle=False)
    (batch,) = list(loader)
    block = batch.blocks[0]
    for i, v in enumerate(batch.seeds.tolist()):
        row = block.indices[block.indptr[i]:block.indptr[i + 1]]
        assert set(block.src_nodes[row].tolist()) == neighbours[v]
    # Graph degrees of the src nodes (GCN).
    assert block.graph_deg.tolist() == [len(neighbours[v]) for v in block.src_nodes.tolist()]


def test_same_epoch_same_batches_other_epoch_other(graph):
    loader = partita.NeighborLoader(graph, fanouts=[3, 3], batch_size=32, seed=11, threads=2,
                                    prefetch=3)
    def epoch(e):
        loader.set_epoch(e)
        return [(b.seeds.tolist(), b.blocks[0].src_nodes.tolist()) for b in loader]
    first = epoch(0)
    assert first == epoch(0)
    assert first != epoch(1)
    # The loop after set_epoch(1) ran epoch 1: the next loop is epoch 2.
    assert loader.epoch == 2


def test_layers_have_gradients_and_match_dense_mean(graph):
    loader = partita.NeighborLoader(graph, fanouts=[5], batch_size=40, shuffle=False)
    batch = next(iter(loader))
    block = batch.blocks[0]
    x = batch.x.clone().requires_grad_(True)
    mean = partita._C.aggregate_mean(block.tensors, x)
    dense = torch.zeros(block.num_dst, block.num_src)
    src, dst = block.edge_index
    dense.index_put_((dst, src), torch.ones(len(src)), accumulate=True)
    dense = dense / dense.sum(1, keepdim=True).clamp_min(1)
    assert torch.allclose(mean, dense @ x, atol=1e-6)
    for conv in (partita.nn.SAGEConv(1433, 8), partita.nn.GCNConv(1433, 8),
                 partita.nn.GATConv(1433, 4, heads=2)):
        out = conv(block, x)
        assert out.shape[0] == block.num_dst
        out.square().sum().backward()
        assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in conv.parameters())


def test_bad_arguments_raise_usage_errors(graph):
    with pytest.raises(partita.UsageError, match="fanouts: 0 is not a fanout"):
        partita.NeighborLoader(graph, fanouts=[0])
    with pytest.raises(partita.UsageError, match="split: 'dev' is not one of train, valid, test"):
        partita.NeighborLoader(graph, split="dev")
    with pytest.raises(partita.UsageError, match="batch_size: must be >= 1"):
        partita.NeighborLoader(graph, batch_size=0)


def test_library_errors_name_python_keywords(graph):
    """The library names its parameters in its own words (`model`, `prefetch`); the package
    shows them as its keywords (python/src/keyword_names.cc)."""
    with pytest.raises(partita.UsageError, match=r"^prefetch: must be in \[1, 1024\], got 0$"):
        partita.NeighborLoader(graph, prefetch=0)
    with pytest.raises(partita.UsageError, match=r"^threads: must be in \[1, 256\], got 300$"):
        partita.NeighborLoader(graph, threads=300)
    with pytest.raises(partita.UsageError, match=r"^kind: 'graphsage' is not one of sage, gcn, gat, gatv2, gine$"):
        partita._C.initial_parameters("graphsage", 4, 8, 3, 2)


def test_enum_keywords_are_parsed_by_the_cli_name_tables():
    """A bad name gets the words of the CLI's name tables (core/name_table.h not_one_of),
    after the keyword; none falls back to a default in silence."""
    with pytest.raises(partita.UsageError, match=r"^level: 'loud' is not one of quiet, info, verbose$"):
        partita._C.set_log_level("loud")
    partita._C.set_log_level("info")
    with pytest.raises(partita.UsageError, match=r"^kind: 'rgcn' is not one of sage, gcn, gat, gatv2, gine$"):
        partita._C.initial_parameters("rgcn", 4, 8, 3, 2)


def test_device_cpu_gives_the_same_batches(graph):
    """device="cpu" (or a torch.device) delivers the batches of the default loader."""
    plain = list(partita.NeighborLoader(graph, fanouts=[4, 2], batch_size=64, seed=5))
    for device in ("cpu", torch.device("cpu")):
        loader = partita.NeighborLoader(graph, fanouts=[4, 2], batch_size=64, seed=5,
                                        device=device)
        assert loader.device == torch.device("cpu")
        batches = list(loader)
        assert len(batches) == len(plain)
        for a, b in zip(plain, batches):
            for t in (b.x, b.y, b.seeds, b.input_nodes):
                assert t.device.type == "cpu"
            assert torch.equal(a.x, b.x) and torch.equal(a.y, b.y)
            assert torch.equal(a.seeds, b.seeds) and torch.equal(a.input_nodes, b.input_nodes)
            for ba, bb in zip(a.blocks, b.blocks):
                assert torch.equal(ba.indptr, bb.indptr) and torch.equal(ba.indices, bb.indices)
                assert torch.equal(ba.src_nodes, bb.src_nodes)


def test_bad_device_raises_usage_error(graph):
    with pytest.raises(partita.UsageError, match=r"^device: 'tpu' is not a device"):
        partita.NeighborLoader(graph, device="tpu")
    if not torch.cuda.is_available():
        # This torch, or this machine, cannot use a GPU: one error naming what is missing.
        with pytest.raises(partita.UsageError, match=r"^device: cuda:7: "):
            partita.NeighborLoader(graph, device="cuda:7")
    else:
        with pytest.raises(partita.UsageError, match=r"^device: cuda:99: out of range"):
            partita.NeighborLoader(graph, device="cuda:99")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_device_cuda_delivers_batches_on_the_gpu(graph):
    plain = list(partita.NeighborLoader(graph, fanouts=[4, 2], batch_size=64, seed=5))
    on_gpu = list(partita.NeighborLoader(graph, fanouts=[4, 2], batch_size=64, seed=5,
                                         device="cuda"))
    for a, b in zip(plain, on_gpu):
        assert b.x.is_cuda and b.y.is_cuda and b.blocks[0].indptr.is_cuda
        assert torch.equal(a.x, b.x.cpu()) and torch.equal(a.y, b.y.cpu())


def cli_error(parts):
    """The error line `partita train --parts <parts>` prints, without `error: `."""
    out = run([PARTITA, "-q", "train", "--parts", parts, "--epochs", "1"], check=False)
    assert out.returncode != 0
    lines = [l for l in out.stderr.splitlines() if l.startswith("error: ")]
    assert len(lines) == 1, out.stderr
    return lines[0][len("error: "):]


def test_missing_directory_same_message_as_the_cli(scratch):
    missing = str(scratch / "absent")
    with pytest.raises(partita.Error) as raised:
        partita.DistGraph(missing)
    assert str(raised.value) == cli_error(missing)


def test_corrupt_part_same_message_as_the_cli(cora_parts, scratch):
    copy = str(scratch / "p1")
    shutil.copytree(cora_parts[1], copy)
    feat = os.path.join(copy, "part0", "feat.npy")
    with open(feat, "r+b") as f:
        f.truncate(os.path.getsize(feat) - 100)
    with pytest.raises(partita.FormatError) as raised:
        partita.DistGraph(copy)
    assert str(raised.value) == cli_error(copy)


def os_threads():
    return len(os.listdir("/proc/self/task"))


def settled_threads():
    """The thread count once it holds still for 0.1 s: on a loaded machine a thread of the
    last epoch (torch's pools, a pipeline thread being reaped) may still be leaving."""
    count, still = os_threads(), 0
    for _ in range(200):
        time.sleep(0.02)
        now = os_threads()
        still = still + 1 if now == count else 0
        count = now
        if still == 5:
            break
    return count


def test_break_stops_the_pipeline_threads(graph):
    """Leaving a loop early (break) stops and joins its sampler threads at once."""
    loader = partita.NeighborLoader(graph, fanouts=[5, 5], batch_size=8, threads=4, prefetch=8)
    assert len(list(loader)) == len(loader)  # a whole epoch first: torch's pools are started
    idle = settled_threads()
    for batch in loader:
        assert os_threads() >= idle + 4  # the pipeline's workers
        break
    assert os_threads() == idle
    it = iter(loader)
    next(it)
    del it  # a generator dropped mid-epoch stops its pipeline too
    assert os_threads() == idle


def test_one_loop_at_a_time(graph):
    """A later loop replaces an unfinished one: the old iterator raises, and dropping it
    does not stop the new loop."""
    loader = partita.NeighborLoader(graph, fanouts=[5], batch_size=16, seed=2)
    first = iter(loader)
    next(first)
    second = iter(loader)
    steps = [next(second).step]
    with pytest.raises(partita.UsageError, match="replaced by a later loop"):
        next(first)
    del first
    steps += [b.step for b in second]
    assert steps == list(range(len(loader)))


def test_closing_the_graph_stops_its_loaders(cora_parts):
    """close() stops a loader mid-epoch (joining its threads) before the session ends; the
    loader then raises a UsageError naming the closed graph."""
    g = partita.DistGraph(cora_parts[1])
    loader = partita.NeighborLoader(g, fanouts=[5, 5], batch_size=8, threads=6, prefetch=8)
    list(loader)
    idle = os_threads()
    it = iter(loader)
    next(it)
    assert os_threads() >= idle + 6
    g.close()
    assert os_threads() <= idle  # the workers joined (and the session's own threads ended)
    with pytest.raises(partita.UsageError, match="its DistGraph is closed"):
        next(it)
    with pytest.raises(partita.UsageError, match="its DistGraph is closed"):
        for batch in loader:
            pass
    with pytest.raises(partita.UsageError, match="DistGraph: closed"):
        partita.NeighborLoader(g, fanouts=[5])
    assert len(loader) == math.ceil(140 / 8)  # the plan stays readable


def test_a_single_process_on_two_parts_suggests_mpirun_python(cora_parts, scratch):
    """One Python process on a 2-part directory: the error names `partita launch -- python3`,
    `mpirun -np 2 python3` and
    the script (the command line names `partita launch` and `mpirun ... partita` instead:
    tests/corpus/cases/train_parts2_one_process)."""
    script = str(scratch / "one_process.py")
    with open(script, "w") as f:
        f.write("import sys, partita\n"
                "try:\n"
                "    partita.DistGraph(sys.argv[1])\n"
                "except partita.UsageError as e:\n"
                "    print(e)\n")
    parts = cora_parts[2]
    head = (f"{parts}: has 2 parts (one per rank) but this is a single process; start one "
            f"rank per part: ")
    out = run([PYTHON, script, parts]).stdout.strip()
    assert out == head + (f"`partita launch -- python3 {script}` or "
                          f"`mpirun -np 2 python3 {script}`")
    code = open(script).read().replace("sys.argv[1]", repr(parts))
    out = run([PYTHON, "-c", code]).stdout.strip()
    assert out == head + ("`partita launch -- python3 <script>` or "
                          "`mpirun -np 2 python3 <script>`")
