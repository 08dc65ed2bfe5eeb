#!/usr/bin/env python3
"""A GNN written in plain PyTorch, trained on a partition with Partita's loader.

    mpirun -np 2 -x PYTHONPATH=build/python python3 examples/python/train_cora.py --parts P

P: a partition of ../shared/datasets/ogb-layout/cora (one rank per part, or any number of
ranks on a 1-part directory). Every rank trains the same model data-parallel: Partita's
loader gives each rank its share of every global batch (sampled and fetched in C++
threads), the loss is summed over the rank's seeds and divided by the global batch size,
and partita.allreduce_gradients sums the gradients, so every rank applies the exact
gradient of the mean loss to the same model (partita.broadcast_parameters gives every rank
rank 0's initial weights). Prints one line per epoch, then test_acc=<accuracy> last.

--ddp averages the gradients with torch.distributed (gloo) and DistributedDataParallel
instead of partita.allreduce_gradients (MASTER_ADDR / MASTER_PORT, default 127.0.0.1:29511):
the loss is then scaled by the ranks, DDP dividing the summed gradients by them. DDP needs a
forward and backward on every rank in every step, so every rank must have seeds in every
step (partita.allreduce_gradients has no such condition).

--init cpp starts from the weights `partita train` builds for the same --seed (so that, with
--dropout 0 and --optimizer sgd, the losses equal the C++ trainer's: tests/python).
"""
import argparse
import json
import os
import time

import torch
import torch.nn.functional as F

import partita


class GNN(torch.nn.Module):
    """L layers of partita.nn convolutions over the loader's blocks (input layer first):
    dropout on every layer's input, ReLU (ELU for GAT) after the hidden ones; GAT's hidden
    layers concatenate `heads` heads, its output layer has one. The model `partita train
    --model KIND` builds, with its parameter names (conv0.lin_neigh.weight, ...): the
    "model" dict of its checkpoints (torch.load) loads into this one as it is."""

    def __init__(self, kind, in_dim, hidden, out_dim, layers, dropout, heads=4):
        super().__init__()
        convs, d = [], in_dim
        for l in range(layers):
            out = out_dim if l + 1 == layers else hidden
            if kind == "sage":
                convs.append(partita.nn.SAGEConv(d, out))
            elif kind == "gcn":
                convs.append(partita.nn.GCNConv(d, out))
            else:
                k = 1 if l + 1 == layers else heads
                convs.append(partita.nn.GATConv(d, out, heads=k, concat=l + 1 < layers))
                out *= k
            d = out
        for l, conv in enumerate(convs):
            self.add_module(f"conv{l}", conv)
        self.convs = convs
        self.kind, self.dropout = kind, dropout

    def forward(self, blocks, x):
        for i, (conv, block) in enumerate(zip(self.convs, blocks)):
            x = F.dropout(x, self.dropout, self.training)
            x = conv(block, x)
            if i + 1 < len(self.convs):
                x = F.elu(x) if self.kind == "gat" else F.relu(x)
        return x


def load_cpp_weights(model, g, args):
    """The initial weights of `partita train --model KIND` with this seed."""
    params = dict(partita._C.initial_parameters(args.model, g.feat_dim, args.hidden,
                                                g.num_classes, len(args.fanouts), args.heads,
                                                args.seed))
    model.load_state_dict(params)


def accuracy(model, g, args, split):
    """Exact accuracy over every id of a split: each rank its own, counts summed."""
    model.eval()
    counts = torch.zeros(2, dtype=torch.int64)
    loader = partita.NeighborLoader(g, args.fanouts, args.batch_size, split=split,
                                    shuffle=False, seed=args.seed)
    with torch.no_grad():
        for batch in loader:
            if batch.num_seeds == 0:
                continue
            pred = model(batch.blocks, batch.x).argmax(1)
            counts += torch.tensor([int((pred == batch.y).sum()), batch.num_seeds])
    partita.allreduce(counts, g)
    model.train()
    return counts[0].item() / max(1, counts[1].item())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", required=True, help="partition directory")
    ap.add_argument("--model", choices=["sage", "gcn", "gat"], default="sage")
    ap.add_argument("--heads", type=int, default=4, help="gat: heads of the hidden layers")
    ap.add_argument("--fanouts", type=lambda s: [int(k) for k in s.split(",")], default=[10, 10])
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=1024, help="global: seeds per step")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--lr", type=float, default=0.003)
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--optimizer", choices=["adam", "sgd"], default="adam")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--init", choices=["torch", "cpp"], default="torch")
    ap.add_argument("--losses-out", help="write each epoch's loss as JSON lines (rank 0)")
    ap.add_argument("--ddp", action="store_true",
                    help="gradients through torch.distributed (gloo) DistributedDataParallel")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    with partita.DistGraph(args.parts) as g:
        model = GNN(args.model, g.feat_dim, args.hidden, g.num_classes, len(args.fanouts),
                    args.dropout, args.heads)
        if args.init == "cpp":
            load_cpp_weights(model, g, args)
        # Every rank trains rank 0's model (the seed alone would not guarantee that: a rank
        # whose RNG was used differently before would build other weights).
        partita.broadcast_parameters(model, g)
        opt = (torch.optim.SGD if args.optimizer == "sgd" else torch.optim.Adam)(
            model.parameters(), lr=args.lr)
        forward, scale = model, 1.0
        if args.ddp:
            import torch.distributed as dist
            os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
            os.environ.setdefault("MASTER_PORT", "29511")
            dist.init_process_group("gloo", rank=g.rank, world_size=g.world_size)
            forward = torch.nn.parallel.DistributedDataParallel(model)
            scale = float(g.world_size)  # DDP averages: undo it for the exact global mean
        loader = partita.NeighborLoader(g, args.fanouts, args.batch_size, seed=args.seed)
        out = open(args.losses_out, "w") if args.losses_out and g.rank == 0 else None
        for epoch in range(args.epochs):
            start, total = time.monotonic(), torch.zeros(1, dtype=torch.float64)
            for batch in loader:
                opt.zero_grad()
                loss = torch.zeros(())
                if batch.num_seeds > 0:
                    logits = forward(batch.blocks, batch.x)
                    loss = F.cross_entropy(logits, batch.y, reduction="sum") / batch.global_size
                    (loss * scale).backward()
                if not args.ddp:
                    partita.allreduce_gradients(model, g)
                step_loss = torch.tensor([float(loss)], dtype=torch.float64)
                total += partita.allreduce(step_loss, g)
                opt.step()
            mean = total.item() / len(loader)
            if g.rank == 0:
                print(f"epoch={epoch + 1} steps={len(loader)} loss={mean:.4f} "
                      f"epoch_s={time.monotonic() - start:.3f}", flush=True)
                if out:
                    out.write(json.dumps({"epoch": epoch + 1, "loss": mean}) + "\n")
        test_acc = accuracy(model, g, args, "test")
        if args.ddp:
            torch.distributed.destroy_process_group()
        if g.rank == 0:
            print(f"test_acc={test_acc:.4f}", flush=True)


if __name__ == "__main__":
    main()
