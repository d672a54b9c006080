"""A readable PyTorch forward pass for the llama family (llama, qwen2's
q/k/v biases, qwen3's q/k norm, Mixtral and Qwen3-MoE experts) over a safetensors folder that
`samebits-engine export` wrote, written the way transformers writes it
(RMSNorm in float32, SwiGLU, sparse MoE blocks, rotate_half or interleaved RoPE with Llama 3.1's
rope_scaling, softmax in
float32, GQA by repeating K/V heads), so its bits are PyTorch's own.

Sequences run in one padded batch: each forward call takes one chunk of
tokens per sequence, chunks of different lengths are right-padded, and the
padding is masked out of attention. Every layer keeps one K/V cache for the
whole batch; a slot holding a padded token has key position -1 and is never
attended to.

Everything lives on one device (the CPU or a CUDA GPU): the weights, the
cache and every tensor a forward call makes; logits come back on it.
Attention is either eager (the explicit product, masked, softmax in float32,
as transformers' eager attention) or torch's scaled_dot_product_attention,
whose backend the caller may restrict around the call.
"""
import math

import torch


class Unsupported(Exception):
    """A checkpoint this forward does not implement (the adapter says `unsupported`)."""


def _config_int(config, key, default=None):
    value = config.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError("config.json: '%s' must be a non-negative integer, not %r" % (key, value))
    return value


def _llama3_rope_scaling(scaling):
    """config.json's rope_scaling: None (or rope_type "default") for none,
    Llama 3.1's llama3 parameters as a dict; other types are unsupported."""
    if not scaling:
        return None
    if not isinstance(scaling, dict):
        raise ValueError("config.json: 'rope_scaling' must be an object")
    rope_type = scaling.get("rope_type", scaling.get("type"))
    if rope_type == "default":
        return None
    if rope_type != "llama3":
        raise Unsupported("rope_scaling of rope_type %r (this adapter implements llama3)" % rope_type)
    keys = ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings")
    for key in keys:
        value = scaling.get(key)
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
            raise ValueError("config.json: rope_scaling '%s' must be a positive number, not %r"
                             % (key, value))
    if not scaling["high_freq_factor"] > scaling["low_freq_factor"]:
        raise ValueError("config.json: rope_scaling 'high_freq_factor' must exceed "
                         "'low_freq_factor'")
    return {key: scaling[key] for key in keys}


def _llama3_inv_freq(inv_freq, scaling):
    """transformers' _compute_llama3_parameters: long wavelengths divided by
    factor, short ones kept, the band between smoothed."""
    factor = scaling["factor"]
    low_freq_factor = scaling["low_freq_factor"]
    high_freq_factor = scaling["high_freq_factor"]
    old_context_len = scaling["original_max_position_embeddings"]
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)


class LlamaConfig:
    """What the forward needs from config.json (transformers' keys, then the
    samebits_* keys that override them); refuses what it does not implement."""

    def __init__(self, config):
        classes = config.get("architectures")
        if not isinstance(classes, list) or not classes:
            raise ValueError("config.json: 'architectures' must name the model class")
        self.model_class = classes[0]
        if self.model_class not in ("LlamaForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM",
                                    "MixtralForCausalLM", "Qwen3MoeForCausalLM",
                                    "Phi3ForCausalLM"):
            raise Unsupported("architecture %s (this adapter runs the llama, qwen2, qwen3, "
                              "mixtral, qwen3_moe and phi3 classes)" % self.model_class)
        if "rope_parameters" in config:
            # transformers 5's RoPE keys: ignored, a scaled model would run unscaled.
            raise Unsupported("config.json's 'rope_parameters' (transformers 5's RoPE keys; this "
                              "adapter reads rope_theta and rope_scaling)")
        self.rope_scaling = _llama3_rope_scaling(config.get("rope_scaling"))
        if config.get("samebits_norm", "rms") != "rms":
            raise Unsupported("samebits_norm '%s' (this adapter implements RMSNorm only)"
                              % config.get("samebits_norm"))
        if config.get("samebits_parallel_block", False):
            raise Unsupported("parallel attention/FFN blocks (samebits_parallel_block)")
        # samebits' shared expert is added ungated (Qwen2-MoE's sigmoid gate is not).
        self.shared_ffn_dim = _config_int(config, "samebits_shared_expert_ffn_dim", 0)
        self.vocab_size = _config_int(config, "vocab_size")
        self.d_model = _config_int(config, "hidden_size")
        self.n_layers = _config_int(config, "num_hidden_layers")
        self.n_heads = _config_int(config, "num_attention_heads")
        self.n_kv_heads = _config_int(config, "num_key_value_heads", self.n_heads)
        if self.n_heads == 0 or self.n_kv_heads == 0 or self.n_heads % self.n_kv_heads:
            raise ValueError("config.json: num_attention_heads %d is not a multiple of "
                             "num_key_value_heads %d" % (self.n_heads, self.n_kv_heads))
        self.head_dim = _config_int(config, "head_dim", self.d_model // self.n_heads)
        self.ffn_dim = _config_int(config, "samebits_ffn_dim",
                                   _config_int(config, "intermediate_size", 0))
        self.norm_eps = float(config.get("rms_norm_eps", 1e-6))
        self.rope_base = float(config.get("rope_theta", 10000.0))
        self.rope_dim = _config_int(config, "samebits_rope_dim", 0) or self.head_dim
        self.rope_style = config.get("samebits_rope_style", "neox")
        if self.rope_style not in ("neox", "interleaved") or self.rope_dim % 2 \
                or self.rope_dim > self.head_dim:
            raise ValueError("config.json: samebits_rope_style must be neox or interleaved and "
                             "samebits_rope_dim even and at most head_dim")
        self.qk_norm = bool(config.get("samebits_qk_norm", self.model_class.startswith("Qwen3")))
        self.logit_scale = float(config.get("samebits_logit_scale", 1.0))
        self.tied_output = bool(config.get("tie_word_embeddings", False))
        self.max_seq_len = _config_int(config, "max_position_embeddings", 4096)
        layers = config.get("samebits_layers", [{}] * self.n_layers)
        if not isinstance(layers, list) or len(layers) != self.n_layers \
                or not all(isinstance(l, dict) for l in layers):
            raise ValueError("config.json: samebits_layers must hold num_hidden_layers objects")
        self.moe = [bool(l.get("moe", False)) for l in layers]
        mixtral = self.model_class == "MixtralForCausalLM"
        self.n_experts = _config_int(config, "num_local_experts" if mixtral else "num_experts", 0)
        if self.model_class in ("MixtralForCausalLM", "Qwen3MoeForCausalLM") and self.n_experts \
                and "samebits_layers" not in config:
            raise Unsupported("a mixture of experts without samebits_layers (which layers are "
                              "MoE; decoder_sparse_step and mlp_only_layers are not read)")
        if any(self.moe):
            self.top_k = _config_int(config, "num_experts_per_tok")
            self.expert_ffn_dim = _config_int(config, "intermediate_size" if mixtral
                                              else "moe_intermediate_size")
            self.renormalize_top_k = bool(config.get("samebits_renormalize_top_k",
                                                     mixtral or config.get("norm_topk_prob", False)))
            if not 1 <= self.top_k <= self.n_experts:
                raise ValueError("config.json: num_experts_per_tok must be in [1, experts]")
        self.sliding_window = [_config_int(l, "sliding_window", 0) for l in layers]
        self.use_rope = [bool(l.get("use_rope", True)) for l in layers]


def _rms_norm(x, weight, eps):
    """transformers' LlamaRMSNorm: in float32, then back to x's dtype, times weight."""
    h = x.to(torch.float32)
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return weight * h.to(x.dtype)


def _swiglu(x, gate, up, down):
    """down(silu(gate x) * (up x)): the llama family's gated FFN."""
    linear = torch.nn.functional.linear
    return linear(torch.nn.functional.silu(linear(x, gate)) * linear(x, up), down)


class LlamaModel:
    """The weights of one checkpoint in one compute dtype, and the forward."""

    def __init__(self, config, tensors, dtype, device=torch.device("cpu"), attention="eager"):
        self.c = c = LlamaConfig(config)
        self.dtype, self.device = dtype, device
        self.sdpa = attention != "eager"
        hd, d = c.head_dim, c.d_model

        def take(name, shape, required=True):
            if name not in tensors:
                if required:
                    raise ValueError("model.safetensors lacks tensor %s" % name)
                return None
            t = tensors[name]
            if list(t.shape) != list(shape):
                raise ValueError("tensor %s has shape %s, expected %s" % (name, list(t.shape), shape))
            # Rounded to the dtype on the CPU, so every device holds the same weights.
            return torch.from_numpy(t.copy()).to(dtype).to(device)

        self.embed = take("model.embed_tokens.weight", [c.vocab_size, d])
        self.output_norm = take("model.norm.weight", [d])
        self.lm_head = self.embed if c.tied_output else take("lm_head.weight", [c.vocab_size, d])
        self.layers = []
        for l in range(c.n_layers):
            p = "model.layers.%d." % l
            b = "samebits.blk.%d." % l  # q/k/v biases outside qwen2 have no HF name

            def bias(hf, gguf, n):
                return take(p + hf, [n], False) if p + hf in tensors else take(b + gguf, [n], False)

            q_rows, kv_rows = c.n_heads * hd, c.n_kv_heads * hd
            if c.model_class == "Phi3ForCausalLM":
                # Phi-3 fuses q, k, v (rows in that order) and gate, up; its
                # modeling slices the fused outputs, as these row slices do.
                wq, wk, wv = torch.split(take(p + "self_attn.qkv_proj.weight",
                                              [q_rows + 2 * kv_rows, d]),
                                         [q_rows, kv_rows, kv_rows])
            else:
                wq = take(p + "self_attn.q_proj.weight", [q_rows, d])
                wk = take(p + "self_attn.k_proj.weight", [kv_rows, d])
                wv = take(p + "self_attn.v_proj.weight", [kv_rows, d])
            layer = {
                "attn_norm": take(p + "input_layernorm.weight", [d]),
                "wq": wq,
                "wk": wk,
                "wv": wv,
                "wo": take(p + "self_attn.o_proj.weight", [d, c.n_heads * hd]),
                "bq": bias("self_attn.q_proj.bias", "attn_q.bias", c.n_heads * hd),
                "bk": bias("self_attn.k_proj.bias", "attn_k.bias", c.n_kv_heads * hd),
                "bv": bias("self_attn.v_proj.bias", "attn_v.bias", c.n_kv_heads * hd),
                "q_norm": take(p + "self_attn.q_norm.weight", [hd], c.qk_norm),
                "k_norm": take(p + "self_attn.k_norm.weight", [hd], c.qk_norm),
                "ffn_norm": take(p + "post_attention_layernorm.weight", [d]),
            }
            if c.moe[l]:
                layer.update(self._experts(take, p, c))
            elif c.model_class == "Phi3ForCausalLM":
                gate, up = torch.split(take(p + "mlp.gate_up_proj.weight", [2 * c.ffn_dim, d]),
                                       c.ffn_dim)
                layer.update({"w_gate": gate, "w_up": up,
                              "w_down": take(p + "mlp.down_proj.weight", [d, c.ffn_dim])})
            else:
                layer.update({"w_gate": take(p + "mlp.gate_proj.weight", [c.ffn_dim, d]),
                              "w_up": take(p + "mlp.up_proj.weight", [c.ffn_dim, d]),
                              "w_down": take(p + "mlp.down_proj.weight", [d, c.ffn_dim])})
            self.layers.append(layer)
        # RoPE frequencies as transformers computes them: 1 / base^(2i / rot), float32.
        exponents = torch.arange(0, c.rope_dim, 2, dtype=torch.float32) / c.rope_dim
        self.inv_freq = 1.0 / (c.rope_base ** exponents)
        if c.rope_scaling:
            self.inv_freq = _llama3_inv_freq(self.inv_freq, c.rope_scaling)
        # Computed on the CPU, then moved, as a model built there and moved
        # holds it: every device rotates by the same frequencies.
        self.inv_freq = self.inv_freq.to(device)

    @staticmethod
    def _experts(take, p, c):
        """A MoE layer's router and experts (Mixtral's or Qwen3-MoE's names)."""
        d, f = c.d_model, c.expert_ffn_dim
        if c.model_class == "MixtralForCausalLM":
            router, e, names = "block_sparse_moe.gate.weight", "block_sparse_moe.experts.%d.", \
                ("w1", "w3", "w2")
        else:
            router, e, names = "mlp.gate.weight", "mlp.experts.%d.", \
                ("gate_proj", "up_proj", "down_proj")
        shared = None
        if c.shared_ffn_dim:
            s, g = p + "mlp.shared_expert.", c.shared_ffn_dim
            shared = (take(s + "gate_proj.weight", [g, d]), take(s + "up_proj.weight", [g, d]),
                      take(s + "down_proj.weight", [d, g]))
        return {"router": take(p + router, [c.n_experts, d]), "shared": shared,
                "experts": [(take(p + e % i + names[0] + ".weight", [f, d]),
                             take(p + e % i + names[1] + ".weight", [f, d]),
                             take(p + e % i + names[2] + ".weight", [d, f]))
                            for i in range(c.n_experts)]}

    def _moe(self, layer, h):
        """transformers' sparse MoE block: router softmax in float32, top-k
        (ties to the lower index, as torch.topk on CPU), optional
        renormalisation, each expert's SwiGLU over the rows that chose it,
        weighted and summed."""
        c = self.c
        shape = h.shape
        h = h.reshape(-1, shape[-1])
        probs = torch.softmax(torch.nn.functional.linear(h, layer["router"]), dim=-1,
                              dtype=torch.float32)
        weights, chosen = torch.topk(probs, c.top_k, dim=-1)
        if c.renormalize_top_k:
            weights = weights / weights.sum(dim=-1, keepdim=True)
        weights = weights.to(h.dtype)
        out = torch.zeros_like(h)
        for e, expert in enumerate(layer["experts"]):
            rows, rank = torch.where(chosen == e)
            if rows.numel() == 0:
                continue
            out.index_add_(0, rows, _swiglu(h[rows], *expert) * weights[rows, rank, None])
        if layer["shared"] is not None:
            out = out + _swiglu(h, *layer["shared"])
        return out.reshape(shape)

    def _ffn(self, layer, l, h):
        """The layer's FFN: a mixture of experts or the dense SwiGLU."""
        if self.c.moe[l]:
            return self._moe(layer, h)
        return _swiglu(h, layer["w_gate"], layer["w_up"], layer["w_down"])

    def new_cache(self, batch):
        """An empty K/V cache for `batch` sequences."""
        c = self.c
        empty = torch.zeros(batch, c.n_kv_heads, 0, c.head_dim, dtype=self.dtype,
                            device=self.device)
        return {"k": [empty] * c.n_layers, "v": [empty] * c.n_layers,
                "key_pos": torch.zeros(batch, 0, dtype=torch.int64, device=self.device),
                "past": [0] * batch}

    def _rope(self, x, positions):
        """Rotates the first rope_dim features of each head of x (B, H, n, hd)."""
        c = self.c
        angles = positions.to(torch.float32)[:, None, :, None] * self.inv_freq  # (B, 1, n, rot/2)
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
        rot, rest = x[..., :c.rope_dim], x[..., c.rope_dim:]
        if c.rope_style == "neox":  # pairs (i, i + rot/2): transformers' rotate_half
            x0, x1 = rot.chunk(2, dim=-1)
            rotated = torch.cat([x0 * cos - x1 * sin, x0 * sin + x1 * cos], dim=-1)
        else:  # pairs (2i, 2i + 1), as GGUF llama stores q and k
            x0, x1 = rot[..., 0::2], rot[..., 1::2]
            rotated = torch.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], dim=-1).flatten(-2)
        return torch.cat([rotated, rest], dim=-1)

    def _attention(self, layer, l, h, positions, key_pos, cache):
        c = self.c
        B, n, _ = h.shape
        q = torch.nn.functional.linear(h, layer["wq"], layer["bq"])
        k = torch.nn.functional.linear(h, layer["wk"], layer["bk"])
        v = torch.nn.functional.linear(h, layer["wv"], layer["bv"])
        q = q.view(B, n, c.n_heads, c.head_dim).transpose(1, 2)
        k = k.view(B, n, c.n_kv_heads, c.head_dim).transpose(1, 2)
        v = v.view(B, n, c.n_kv_heads, c.head_dim).transpose(1, 2)
        if c.qk_norm:  # RMSNorm of each head, before RoPE (qwen3)
            q = _rms_norm(q, layer["q_norm"], c.norm_eps)
            k = _rms_norm(k, layer["k_norm"], c.norm_eps)
        if c.use_rope[l]:
            q, k = self._rope(q, positions), self._rope(k, positions)
        cache["k"][l] = k = torch.cat([cache["k"][l], k], dim=2)
        cache["v"][l] = v = torch.cat([cache["v"][l], v], dim=2)
        group = c.n_heads // c.n_kv_heads
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        # Causal, windowed, padding-free: key j is seen from query i when it
        # holds a real token at a position <= i's and within the window.
        kp, qp = key_pos[:, None, None, :], positions[:, None, :, None]
        visible = (kp >= 0) & (kp <= qp)
        if c.sliding_window[l] > 0:
            visible &= qp - kp < c.sliding_window[l]
        attend = self._sdpa if self.sdpa else self._eager_attention
        o = attend(q, k, v, visible)
        # A query row that sees no key at all (a padded row more than a
        # window past its sequence's last token) comes out NaN. Zeroed, so
        # that no NaN enters that slot's cached K/V, where a zero weight
        # times NaN would still make NaN in every later row of the sequence.
        # Rows that see a key keep their bits.
        o = o.masked_fill(~visible.any(dim=-1, keepdim=True), 0.0)
        o = o.transpose(1, 2).reshape(B, n, c.n_heads * c.head_dim)
        return torch.nn.functional.linear(o, layer["wo"])

    def _eager_attention(self, q, k, v, visible):
        """transformers' eager attention: scores, masked, softmax in float32."""
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.c.head_dim)  # (B, H, n, keys)
        scores = scores.masked_fill(~visible, float("-inf"))
        p = torch.softmax(scores, dim=-1, dtype=torch.float32).to(self.dtype)
        return torch.matmul(p, v)

    @staticmethod
    def _sdpa(q, k, v, visible):
        """torch's fused attention with the same mask (True: attend), in the
        backend the caller allowed (scale 1 / sqrt(head_dim), its default)."""
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=visible)

    @torch.no_grad()
    def forward(self, chunks, cache):
        """Feeds chunks[b] (a list of token ids, possibly empty) to sequence b
        of `cache`. Returns float32 logits (B, n, vocab) for the padded rows."""
        c = self.c
        B, n = len(chunks), max(len(chunk) for chunk in chunks)
        tokens = torch.zeros(B, n, dtype=torch.int64)
        positions = torch.zeros(B, n, dtype=torch.int64)
        real = torch.zeros(B, n, dtype=torch.bool)
        for b, chunk in enumerate(chunks):
            tokens[b, :len(chunk)] = torch.tensor(chunk, dtype=torch.int64)
            positions[b] = torch.arange(cache["past"][b], cache["past"][b] + n)
            real[b, :len(chunk)] = True
            cache["past"][b] += len(chunk)
        # Filled row by row on the CPU, then moved in one copy each (integers:
        # exact anywhere); on the CPU .to() returns the very same tensors.
        tokens, positions, real = (t.to(self.device) for t in (tokens, positions, real))
        cache["key_pos"] = torch.cat([cache["key_pos"], positions.masked_fill(~real, -1)], dim=1)
        x = self.embed[tokens]  # (B, n, d)
        for l, layer in enumerate(self.layers):
            h = _rms_norm(x, layer["attn_norm"], c.norm_eps)
            x = x + self._attention(layer, l, h, positions, cache["key_pos"], cache)
            x = x + self._ffn(layer, l, _rms_norm(x, layer["ffn_norm"], c.norm_eps))
        x = _rms_norm(x, self.output_norm, c.norm_eps)
        logits = torch.nn.functional.linear(x, self.lm_head).to(torch.float32)
        if c.logit_scale != 1.0:
            logits = logits * c.logit_scale
        return logits
