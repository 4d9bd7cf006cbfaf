"""A small llama-architecture causal LM in PyTorch, laid out like Hugging Face's LlamaForCausalLM
(rotate-half RoPE, untied embeddings), so that its weights export through write_gguf unchanged."""

from __future__ import annotations

from typing import cast

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from daemon.tools.gguf_writer import ModelShape

IGNORE = -100  # label of positions without loss (prompt, padding)

# Parameters with a vocabulary of ~8,000 (the full corpus's): tiny 0.6 M (tests), base 6.9 M (tsuzuri-base),
# small 16 M, m25 28 M (the largest whose Q8_0 GGUF stays under 30 MB), m50 60 M, m100 110 M. README's
# training table has their measured CPU throughput.
CONFIGS = {
    "tiny": ModelShape(d_model=64, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=160, context=256),
    "base": ModelShape(d_model=256, n_layers=4, n_heads=4, n_kv_heads=4, d_ff=704, context=256),
    "small": ModelShape(d_model=384, n_layers=6, n_heads=6, n_kv_heads=6, d_ff=1024, context=256),
    "m25": ModelShape(d_model=512, n_layers=6, n_heads=8, n_kv_heads=8, d_ff=1408, context=256),
    "m50": ModelShape(d_model=640, n_layers=10, n_heads=10, n_kv_heads=10, d_ff=1728, context=256),
    "m100": ModelShape(d_model=768, n_layers=14, n_heads=12, n_kv_heads=12, d_ff=2048, context=256),
}


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


def rope_tables(head_dim: int, length: int, base: float) -> tuple[torch.Tensor, torch.Tensor]:
    inv_freq = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    angles = torch.outer(torch.arange(length, dtype=torch.float64), inv_freq)
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos().float(), angles.sin().float()


class Attention(nn.Module):
    def __init__(self, shape: ModelShape):
        super().__init__()
        self.shape = shape
        d, kv = shape.d_model, shape.n_kv_heads * shape.head_dim
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, kv, bias=False)
        self.v = nn.Linear(d, kv, bias=False)
        self.o = nn.Linear(d, d, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        batch, length, _ = x.shape
        s = self.shape
        q = self.q(x).view(batch, length, s.n_heads, s.head_dim).transpose(1, 2)
        k = self.k(x).view(batch, length, s.n_kv_heads, s.head_dim).transpose(1, 2)
        v = self.v(x).view(batch, length, s.n_kv_heads, s.head_dim).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        groups = s.n_heads // s.n_kv_heads
        k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(out.transpose(1, 2).reshape(batch, length, s.d_model))


class MLP(nn.Module):
    def __init__(self, shape: ModelShape):
        super().__init__()
        self.gate = nn.Linear(shape.d_model, shape.d_ff, bias=False)
        self.up = nn.Linear(shape.d_model, shape.d_ff, bias=False)
        self.down = nn.Linear(shape.d_ff, shape.d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Block(nn.Module):
    def __init__(self, shape: ModelShape):
        super().__init__()
        self.attn_norm = RMSNorm(shape.d_model, shape.norm_eps)
        self.attn = Attention(shape)
        self.ffn_norm = RMSNorm(shape.d_model, shape.norm_eps)
        self.mlp = MLP(shape)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.attn_norm(x), cos, sin)
        return x + self.mlp(self.ffn_norm(x))


class LlamaLM(nn.Module):
    def __init__(self, shape: ModelShape, n_vocab: int):
        super().__init__()
        if shape.d_model % shape.n_heads or shape.n_heads % shape.n_kv_heads or shape.head_dim % 2:
            raise ValueError(f"inconsistent head counts in {shape}")
        self.shape = shape
        self.n_vocab = n_vocab
        self.embed = nn.Embedding(n_vocab, shape.d_model)
        self.blocks = nn.ModuleList(Block(shape) for _ in range(shape.n_layers))
        self.norm = RMSNorm(shape.d_model, shape.norm_eps)
        self.lm_head = nn.Linear(shape.d_model, n_vocab, bias=False)
        cos, sin = rope_tables(shape.head_dim, shape.context, shape.rope_base)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        self.apply(self._init)
        for block in self.typed_blocks():  # residual outputs scaled down with depth (GPT-2 style)
            for proj in (block.attn.o, block.mlp.down):
                nn.init.normal_(proj.weight, std=0.02 / (2 * shape.n_layers) ** 0.5)

    def typed_blocks(self) -> list[Block]:
        return [cast(Block, block) for block in self.blocks]

    @staticmethod
    def _init(module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits (batch, length, vocab) for token ids (batch, length)."""
        return self.lm_head(self.hidden(tokens))

    def hidden(self, tokens: torch.Tensor) -> torch.Tensor:
        """Final-norm hidden states (batch, length, d_model) for token ids (batch, length)."""
        length = tokens.shape[1]
        if length > self.shape.context:
            raise ValueError(f"sequence of {length} tokens exceeds the context of {self.shape.context}")
        cos, sin = cast(torch.Tensor, self.cos)[:length], cast(torch.Tensor, self.sin)[:length]
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.norm(x)

    def loss(self, tokens: torch.Tensor, labels: torch.Tensor, total: float | None = None) -> torch.Tensor:
        """Next-token cross-entropy summed where labels[b, t] (the token after position t) is not IGNORE,
        divided by `total` (default: the number of those labels, a mean). A process of a data-parallel run
        passes the global count over the world size, so that the averaged gradient is the global batch's."""
        # the vocabulary projection only where there is a label: prompts are about half of the tokens
        wanted = labels != IGNORE
        logits = self.lm_head(self.hidden(tokens)[wanted])
        summed = F.cross_entropy(logits.float(), labels[wanted], reduction="sum")
        return summed / (total if total is not None else wanted.sum().clamp(min=1))

    def export_weights(self) -> dict[str, np.ndarray]:
        """float32 (out, in) arrays under write_gguf's names."""

        def array(t: torch.Tensor) -> np.ndarray:
            return t.detach().to("cpu", torch.float32).numpy().copy()

        weights = {
            "embed": array(self.embed.weight),
            "norm": array(self.norm.weight),
            "lm_head": array(self.lm_head.weight),
        }
        for i, block in enumerate(self.typed_blocks()):
            weights.update(
                {
                    f"{i}.attn_norm": array(block.attn_norm.weight),
                    f"{i}.ffn_norm": array(block.ffn_norm.weight),
                    f"{i}.q": array(block.attn.q.weight),
                    f"{i}.k": array(block.attn.k.weight),
                    f"{i}.v": array(block.attn.v.weight),
                    f"{i}.o": array(block.attn.o.weight),
                    f"{i}.gate": array(block.mlp.gate.weight),
                    f"{i}.up": array(block.mlp.up.weight),
                    f"{i}.down": array(block.mlp.down.weight),
                }
            )
        return weights


class Objective(nn.Module):
    """The training loss as a module's forward, which DistributedDataParallel and torch.compile wrap."""

    def __init__(self, model: LlamaLM):
        super().__init__()
        self.model = model

    def forward(self, tokens: torch.Tensor, labels: torch.Tensor, total: float) -> torch.Tensor:
        return self.model.loss(tokens, labels, total)


def batch_tensors(examples: list[tuple[list[int], int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded token ids and labels for (ids, prompt length) examples: loss on the output tokens only."""
    length = max(len(ids) for ids, _ in examples)
    tokens = np.zeros((len(examples), length), dtype=np.int64)
    labels = np.full((len(examples), length), IGNORE, dtype=np.int64)
    for row, (ids, n_prompt) in enumerate(examples):
        tokens[row, : len(ids)] = ids
        labels[row, n_prompt - 1 : len(ids) - 1] = ids[n_prompt:]
    return torch.from_numpy(tokens), torch.from_numpy(labels)
