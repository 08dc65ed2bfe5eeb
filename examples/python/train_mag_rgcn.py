"""An R-GCN written in plain PyTorch, trained on a typed partition with Partita's loader.

    mpirun -np 2 -x PYTHONPATH=build/python python3 examples/python/train_mag_rgcn.py --parts P

P: a typed partition, e.g. heco-acm made with `partita partition --dataset
../shared/datasets/ogb-layout/heco-acm --split heco60 --num-parts 2 --out P`, or a generated
mag graph (`partita generate --hetero mag --nodes N --out D`, then `partita partition
--dataset D ...`). Test accuracies of this example against `partita train --model rgcn`:
`python3 bench/python_examples.py --groups mag_rgcn` (docs/python.md).

The model is `partita train --model rgcn`'s: every featured node type projected to --hidden
by a Linear, every featureless type a learned embedding of width --hidden
(partita.DistEmbedding, trained by partita.SparseAdam at twice --lr, as the C++ trainer
does), then --fanouts layers of relational convolution
out_i = W_self h_i + sum_r mean_{j in N_r(i)} h_j W_r + b over the loader's per-relation
blocks, dropout on every layer's input and ReLU after the hidden ones. Data-parallel: each
rank's loss is summed over its seeds and divided by the global batch size, and
partita.allreduce_gradients sums the gradients. Prints one line per epoch, then
test_acc=<accuracy> last.
"""
import argparse
import math
import time

import torch
import torch.nn.functional as F

import partita


def glorot(*shape):
    fan_in, fan_out = shape[-2], shape[-1]
    bound = math.sqrt(6.0 / (fan_in + fan_out))
    return torch.nn.Parameter(torch.empty(*shape).uniform_(-bound, bound))


class RelGraphConv(torch.nn.Module):
    """One relational graph convolution over a partita HeteroBlock: h_dict maps each node type
    to its src rows ([block.num_src_dict[t], in]); returns each type's dst rows."""

    def __init__(self, in_dim, out_dim, num_relations):
        super().__init__()
        self.weight = glorot(num_relations, in_dim, out_dim)
        self.self_weight = glorot(in_dim, out_dim)
        self.bias = torch.nn.Parameter(torch.zeros(out_dim))

    def forward(self, block, h_dict):
        out = {t: h[:block.num_dst_dict[t]] @ self.self_weight + self.bias
               for t, h in h_dict.items()}
        for r, (src, _, dst) in enumerate(block.edge_types):
            rel = block[r]
            if rel.num_edges == 0:
                continue
            msg = h_dict[src].index_select(0, rel.indices)
            total = torch.zeros(rel.num_dst, msg.size(1)).index_add_(0, rel.edge_dst, msg)
            deg = (rel.indptr[1:] - rel.indptr[:-1]).clamp(min=1).unsqueeze(1)
            out[dst] = out[dst] + (total / deg) @ self.weight[r]
        return out


class RGCN(torch.nn.Module):
    def __init__(self, type_dims, hidden, out_dim, num_relations, layers, dropout):
        super().__init__()
        self.proj = torch.nn.ModuleDict(
            {t: torch.nn.Linear(d, hidden) for t, d in type_dims.items() if d > 0})
        self.convs = torch.nn.ModuleList(
            [RelGraphConv(hidden, out_dim if l + 1 == layers else hidden, num_relations)
             for l in range(layers)])
        self.dropout = dropout

    def forward(self, blocks, x_dict, emb_dict, target):
        h = {t: self.proj[t](x) for t, x in x_dict.items()}
        h.update(emb_dict)
        for l, (conv, block) in enumerate(zip(self.convs, blocks)):
            h = {t: F.dropout(v, self.dropout, self.training) for t, v in h.items()}
            h = conv(block, h)
            if l + 1 < len(self.convs):
                h = {t: F.relu(v) for t, v in h.items()}
        return h[target]


def inputs(batch, embeddings):
    """The featureless types' rows of the batch's input nodes, from their DistEmbeddings."""
    return {t: emb(batch.n_id_dict[t]) for t, emb in embeddings.items()}


def accuracy(model, g, embeddings, args, split):
    """Exact accuracy over every id of a split: each rank its own, counts summed."""
    model.eval()
    counts = torch.zeros(2, dtype=torch.int64)
    loader = partita.NeighborLoader(g, args.fanouts, args.batch_size, split=split,
                                    shuffle=False, seed=args.seed)
    with torch.no_grad():
        for batch in loader:
            if batch.num_seeds == 0:
                continue
            logits = model(batch.blocks, batch.x_dict, inputs(batch, embeddings),
                           batch.target_type)
            pred = logits.argmax(1)
            counts += torch.tensor([int((pred == batch.y).sum()), batch.num_seeds])
    partita.allreduce(counts, g)
    model.train()
    return counts[0].item() / max(1, counts[1].item())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", required=True, help="typed partition directory")
    ap.add_argument("--fanouts", default="25,20",
                    help="per hop, N per relation (partita train --fanouts syntax)")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=1024, help="global: seeds per step")
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--embed-lr", type=float, default=0, help="0: 2 x --lr (as partita train)")
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    layers = len(args.fanouts.split(","))
    sparse = partita.SparseAdam(lr=args.embed_lr or 2 * args.lr)
    with partita.DistGraph(args.parts, embedding_dim=args.hidden, sparse_optimizer=sparse,
                           embedding_seed=args.seed) as g:
        type_dims = dict(zip(g.node_types, g.type_feat_dims))
        embeddings = {t: partita.DistEmbedding(g, t, args.hidden)
                      for t, d in type_dims.items() if d == 0}
        model = RGCN(type_dims, args.hidden, g.num_classes, len(g.relations), layers,
                     args.dropout)
        partita.broadcast_parameters(model, g)
        opt = torch.optim.Adam(model.parameters(), lr=args.lr)
        loader = partita.NeighborLoader(g, args.fanouts, args.batch_size, seed=args.seed)
        for epoch in range(args.epochs):
            start, total = time.monotonic(), torch.zeros(1, dtype=torch.float64)
            for batch in loader:
                opt.zero_grad()
                loss = torch.zeros(())
                if batch.num_seeds > 0:
                    logits = model(batch.blocks, batch.x_dict, inputs(batch, embeddings),
                                   batch.target_type)
                    loss = F.cross_entropy(logits, batch.y, reduction="sum") / batch.global_size
                    loss.backward()
                partita.allreduce_gradients(model, g)  # every rank, every step
                opt.step()
                sparse.step()  # the embeddings' rows, on their owners (collective)
                total += partita.allreduce(torch.tensor([float(loss)], dtype=torch.float64), g)
            if g.rank == 0:
                print(f"epoch={epoch + 1} steps={len(loader)} loss={total.item() / len(loader):.4f}"
                      f" epoch_s={time.monotonic() - start:.3f}", flush=True)
        test_acc = accuracy(model, g, embeddings, args, "test")
        if g.rank == 0:
            print(f"test_acc={test_acc:.4f}", flush=True)


if __name__ == "__main__":
    main()
