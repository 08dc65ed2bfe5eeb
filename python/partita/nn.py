"""Partita's block convolutions as torch.nn.Modules, on the fused C++ kernels
(nn/message_passing.h), with autograd. Each takes a loader Block and the source rows
x_src [block.num_src, in] and returns the destination rows [block.num_dst, out]. The
parameter names are those of the C++ layers (nn/conv.h), so a C++ GnnModel's parameters
(`partita._C.initial_parameters`) load into a model built of these.
"""
import torch

from . import _C


class SAGEConv(torch.nn.Module):
    """GraphSAGE-mean: lin_neigh(mean of in-neighbours) + lin_root(x_dst)."""

    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.lin_neigh = torch.nn.Linear(in_dim, out_dim)
        self.lin_root = torch.nn.Linear(in_dim, out_dim, bias=False)

    def forward(self, block, x_src):
        return (self.lin_neigh(_C.aggregate_mean(block.tensors, x_src)) +
                self.lin_root(x_src[:block.num_dst]))


class GCNConv(torch.nn.Module):
    """GCN (Kipf & Welling): symmetric normalization with the graph degrees (+1 self loop),
    rescaled to the sampled in-edges, as the C++ GCNConv."""

    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.lin = torch.nn.Linear(in_dim, out_dim, bias=False)
        self.bias = torch.nn.Parameter(torch.zeros(out_dim))
        torch.nn.init.xavier_uniform_(self.lin.weight)

    def forward(self, block, x_src):
        t = block.tensors
        if t.graph_deg is None or not t.graph_deg.numel() and t.num_src:
            deg_src, deg_dst = t.deg_src.float(), t.deg_dst.float()
            inv_dst, inv_src = (deg_dst + 1).rsqrt(), (deg_src + 1).rsqrt()
            edge_w = inv_dst[t.edge_dst] * inv_src[t.indices]
            self_w = inv_dst * inv_src[:t.num_dst]
        else:
            deg = t.graph_deg.float()
            inv_src = (deg + 1).rsqrt()
            inv_dst = inv_src[:t.num_dst]
            scale = deg[:t.num_dst] / t.deg_dst.clamp_min(1).float()
            edge_w = (inv_dst * scale)[t.edge_dst] * inv_src[t.indices]
            self_w = inv_dst * inv_dst
        agg = _C.aggregate(t, x_src, edge_w) + x_src[:t.num_dst] * self_w.unsqueeze(1)
        return self.lin(agg) + self.bias


class GATConv(torch.nn.Module):
    """GAT: `heads` attention heads over each dst's in-edges and itself (concatenated, or
    averaged with concat=False)."""

    def __init__(self, in_dim, head_dim, heads=1, concat=True):
        super().__init__()
        self.head_dim, self.heads, self.concat = head_dim, heads, concat
        self.lin = torch.nn.Linear(in_dim, heads * head_dim, bias=False)
        self.att_src = torch.nn.Parameter(torch.empty(heads, head_dim))
        self.att_dst = torch.nn.Parameter(torch.empty(heads, head_dim))
        self.bias = torch.nn.Parameter(torch.zeros(heads * head_dim if concat else head_dim))
        for w in (self.lin.weight, self.att_src, self.att_dst):
            torch.nn.init.xavier_uniform_(w)

    def forward(self, block, x_src):
        t = block.tensors
        h = self.lin(x_src).view(t.num_src, self.heads, self.head_dim)
        score_src = (h * self.att_src).sum(-1)
        score_dst = (h[:t.num_dst] * self.att_dst).sum(-1)
        looped = _C.with_self_loops(t)
        alpha = _C.gat_edge_softmax(looped, score_src, score_dst, 0.2)  # [E + num_dst, K]
        out = _C.aggregate(looped, h.reshape(t.num_src, -1), alpha)
        out = out.view(t.num_dst, self.heads, self.head_dim)
        out = out.reshape(t.num_dst, -1) if self.concat else out.mean(1)
        return out + self.bias
