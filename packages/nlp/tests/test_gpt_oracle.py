"""Our GPT against transformers' GPT2LMHeadModel with the same weights (the layouts map one to one:
GPT-2's Conv1D keeps [in, out] like Paddle's Linear, c_attn splits q|k|v as our qkv_proj does)."""

import numpy as np

import paddlectl.framework as paddle
from paddlectl.nlp.gpt import GPTConfig, GPTLMHeadModel

CONFIG = GPTConfig(
    vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=24
)


def gpt2_names(layers: int) -> dict[str, str]:
    """Our parameter name -> GPT-2's."""
    names = {"word_embeddings.weight": "transformer.wte.weight", "position_embeddings.weight": "transformer.wpe.weight"}
    names |= {"norm.weight": "transformer.ln_f.weight", "norm.bias": "transformer.ln_f.bias"}
    parts = {"norm1": "ln_1", "self_attn.qkv_proj": "attn.c_attn", "self_attn.out_proj": "attn.c_proj"}
    parts |= {"norm2": "ln_2", "linear1": "mlp.c_fc", "linear2": "mlp.c_proj"}
    for i in range(layers):
        for ours, theirs in parts.items():
            for kind in ("weight", "bias"):
                names[f"blocks.{i}.{ours}.{kind}"] = f"transformer.h.{i}.{theirs}.{kind}"
    return names


def test_logits_equal_gpt2_with_the_same_weights(transformers):  # the fixture marks it torch_oracle
    import torch

    paddle.seed(11)
    ours = GPTLMHeadModel(CONFIG)
    ours.eval()
    theirs = transformers.GPT2LMHeadModel(
        transformers.GPT2Config(
            vocab_size=CONFIG.vocab_size, n_positions=CONFIG.max_position_embeddings, n_embd=CONFIG.hidden_size,
            n_layer=CONFIG.num_hidden_layers, n_head=CONFIG.num_attention_heads, resid_pdrop=0.0, embd_pdrop=0.0,
            attn_pdrop=0.0, layer_norm_epsilon=CONFIG.layer_norm_epsilon, activation_function="gelu_new",
        )
    ).eval()  # fmt: skip
    state = {n: p.numpy() for n, p in ours.named_parameters()}
    names = gpt2_names(CONFIG.num_hidden_layers)
    assert set(state) == set(names)
    theirs.load_state_dict({names[n]: torch.tensor(v) for n, v in state.items()}, strict=False)
    ids = np.random.default_rng(0).integers(0, CONFIG.vocab_size, (2, 17))
    with torch.no_grad():
        expected = theirs(torch.tensor(ids)).logits.numpy()
    np.testing.assert_allclose(ours(paddle.to_tensor(ids)).numpy(), expected, atol=1e-4, rtol=1e-4)
