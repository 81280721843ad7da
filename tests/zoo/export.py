#!/usr/bin/python3
"""The zoo's models, exported once with Debian's python3-torch and python3-torchvision.

usage: export.py OUT_DIR        writes OUT_DIR/<name>.onnx for every model of ZOO that is
                                not there yet, and prints the names, one a line

Random weights (torch.manual_seed(0) before each model is built), eval mode, a static
input of the listed shape, at the listed opset, exported by the Python entry point's
exporter (mncc.export_torch). The exports are cached for make zoo-compile (under build/zoo):
a model is exported again only when its file is missing. make zoo takes the modules
themselves (model()) through mncc.compile."""
import os
import sys

# (torchvision builder, batch, opset)
NETS = ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large", "efficientnet_b0",
        "squeezenet1_1", "shufflenet_v2_x1_0", "regnet_x_400mf", "densenet121", "googlenet"]
# more classifiers, at opset 17 only: a flattened image's classifier (AlexNet), channel-last
# blocks with LayerNorm (ConvNeXt), explicit Pads before pools (Inception v3, at its 299 x 299), MNASNet,
# RegNetY (squeeze-excitation)
MORE = ["alexnet", "convnext_tiny", "inception_v3", "mnasnet0_5", "regnet_y_400mf"]
SIZE = {"inception_v3": 299}
# segmentation (torchvision.models.segmentation, 21 classes, the "out" map): a decoder's
# upsampling (Resize, its skip connection on another grid of tiles), dilated convolutions
SEG = ["lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large", "fcn_resnet50"]
# transformer encoders (torch.nn.TransformerEncoder, batch first, no dropout, feed-forward
# 4 d): name -> (d_model, heads, sequence, layers); the input is (batch, sequence, d_model)
ENC = {"transformer_encoder_d512_h8_s64_l6": (512, 8, 64, 6)}
# vision transformers (torchvision's VisionTransformer; vit_b_16's architecture): name -> its arguments; the input is
# (batch, 3, image_size, image_size). torchvision starts the head at zero (every logit then
# 0, whatever the encoder computes): it is drawn at random here like the rest
VIT = {"vit_i64_p16_l2_h4_d128": dict(image_size=64, patch_size=16, num_layers=2, num_heads=4, hidden_dim=128,
                                      mlp_dim=256),
       "vit_b_16": dict(image_size=224, patch_size=16, num_layers=12, num_heads=12, hidden_dim=768, mlp_dim=3072)}
# language models with embeddings (token, learned position and, for BERT, token-type tables read by run-time
# indices; GELU): a BERT-base-shaped encoder (post-norm) and a GPT-style decoder stack (pre-norm, a causal mask,
# a final LayerNorm): name -> (layers, d_model, heads, sequence, vocabulary, positions, types); the inputs are
# int64 token ids of (batch, sequence), and BERT's token types
LM = {"bert_base_l12_s128": (12, 768, 12, 128, 30522, 512, 2), "gpt_l6_d512_s128": (6, 512, 8, 128, 50257, 1024, 0)}
# recurrent models (torch.nn.LSTM / GRU, 2 layers, hidden 256, over 50 steps of 64 features, sequence first, a
# linear head on the last step): name -> the torch module's class name
RNN = {"lstm_l2_h256_s50": "LSTM", "gru_l2_h256_s50": "GRU"}
# an MLP-Mixer (patch 16 at 224 x 224, 196 tokens): its token-mixing MLPs read the tokens' features transposed,
# each a Transpose that makes another axis the packed one, and back: name -> (layers, hidden)
MIXER = {"mixer_s16_l4_d256": (4, 256)}
# a conformer's convolution modules (LayerNorm, pointwise Conv1d and GLU, depthwise Conv1d of 15 taps, BatchNorm,
# SiLU, pointwise Conv1d, residual) over 100 steps: name -> (modules, d_model); the input is (batch, steps, d_model)
CONF = {"conformer_conv_l2_d256_s100": (2, 256)}
ZOO = [(n, 1, op) for op in (13, 17) for n in NETS] + [(n, 4, op) for op in (13, 17) for n in ("resnet18", "mobilenet_v2")] + \
    [(n, 1, 17) for n in SEG] + [(n, b, 17) for n in ENC for b in (1, 4)] + [(n, 1, 17) for n in MORE] + [(n, 1, 17) for n in VIT] + \
    [(n, 1, 17) for n in RNN] + [(n, 1, 17) for n in LM] + [(n, 1, 17) for n in MIXER] + \
    [(n, 1, 17) for n in CONF]


def name_of(net, batch, opset):
    return "%s_b%d_op%d" % (net, batch, opset)


def mixer(layers, d):
    import torch
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, tokens):
            super().__init__()
            self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.t = nn.Sequential(nn.Linear(tokens, d // 2), nn.GELU(), nn.Linear(d // 2, tokens))
            self.c = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            x = x + self.t(self.n1(x).transpose(1, 2)).transpose(1, 2)
            return x + self.c(self.n2(x))

    class Mixer(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, d, 16, 16)
            self.blocks = nn.Sequential(*[Block(196) for _ in range(layers)])
            self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, 1000)

        def forward(self, x):
            x = self.blocks(self.stem(x).flatten(2).transpose(1, 2))
            return self.head(self.norm(x).mean(1))

    return Mixer().eval()


def conformer_conv(modules, d):
    import torch
    nn = torch.nn

    class Module(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln, self.pw1, self.pw2 = nn.LayerNorm(d), nn.Conv1d(d, 2 * d, 1), nn.Conv1d(d, d, 1)
            self.dw, self.bn = nn.Conv1d(d, d, 15, padding=7, groups=d), nn.BatchNorm1d(d)

        def forward(self, x):
            y = nn.functional.glu(self.pw1(self.ln(x).transpose(1, 2)), dim=1)
            return x + self.pw2(nn.functional.silu(self.bn(self.dw(y)))).transpose(1, 2)

    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.mods, self.head = nn.Sequential(*[Module() for _ in range(modules)]), nn.Linear(d, 32)

        def forward(self, x):
            return self.head(self.mods(x))

    m = Stack().eval()
    for b in m.modules():  # statistics of a trained net (fresh ones are 0 and 1)
        if isinstance(b, nn.BatchNorm1d):
            b.running_mean.uniform_(-0.5, 0.5)
            b.running_var.uniform_(0.5, 2)
    return m


def build(tv, net):
    if net in CONF:
        return conformer_conv(*CONF[net])
    if net in MIXER:
        return mixer(*MIXER[net])
    if net in ENC:
        import torch
        d, heads, _, layers = ENC[net]
        layer = torch.nn.TransformerEncoderLayer(d, heads, dim_feedforward=4 * d, dropout=0.0, batch_first=True)
        m = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        for mod in m.modules():  # the layers are copies of one: each its own weights
            for reset in ("reset_parameters", "_reset_parameters"):
                if mod is not m and hasattr(mod, reset):
                    getattr(mod, reset)()
        return m.eval()
    if net in LM:
        import torch
        layers, d, heads, seq, vocab, npos, ntypes = LM[net]
        gpt = ntypes == 0

        class Language(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.tok = torch.nn.Embedding(vocab, d)
                self.pos = torch.nn.Embedding(npos, d)
                self.typ = torch.nn.Embedding(ntypes, d) if ntypes else None
                self.ln = torch.nn.LayerNorm(d, eps=1e-5 if gpt else 1e-12)
                layer = torch.nn.TransformerEncoderLayer(d, heads, dim_feedforward=4 * d, dropout=0.0, activation="gelu",
                                                         batch_first=True, norm_first=gpt)
                self.enc = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
                for mod in self.enc.modules():  # the layers are copies of one: each its own weights
                    for reset in ("reset_parameters", "_reset_parameters"):
                        if mod is not self.enc and hasattr(mod, reset):
                            getattr(mod, reset)()
                self.register_buffer("pids", torch.arange(seq).unsqueeze(0))
                self.register_buffer("causal", torch.triu(torch.full((seq, seq), float("-inf")), 1))

            def forward(self, ids, types=None):
                x = self.tok(ids) + self.pos(self.pids)
                if gpt:
                    return self.ln(self.enc(x, mask=self.causal))
                return self.enc(self.ln(x + self.typ(types)))

        return Language().eval()
    if net in RNN:
        import torch

        class Recurrent(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = getattr(torch.nn, RNN[net])(64, 256, num_layers=2)
                self.head = torch.nn.Linear(256, 10)

            def forward(self, x):
                return self.head(self.rnn(x)[0][-1])

        return Recurrent().eval()
    if net in VIT:
        import torch
        m = tv.models.vision_transformer.VisionTransformer(**VIT[net])
        torch.nn.init.normal_(m.heads.head.weight, std=0.02)
        torch.nn.init.normal_(m.heads.head.bias, std=0.02)
        return m.eval()
    kw = {"weights": None}
    if net in ("googlenet", "inception_v3"):
        kw.update(aux_logits=False, init_weights=True)  # eval mode returns the logits only
    if net in SEG:
        import torch

        class Out(torch.nn.Module):  # the class map only (the model returns a dict)
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, x):
                return self.m(x)["out"]

        return Out(getattr(tv.models.segmentation, net)(weights=None, weights_backbone=None, num_classes=21)).eval()
    return getattr(tv.models, net)(**kw).eval()


def example(net, batch):
    """(the example inputs, their names, the output names) of a zoo model"""
    import torch
    side = VIT[net]["image_size"] if net in VIT else SIZE.get(net, 224)
    if net in LM:
        _, _, _, seq, vocab, _, ntypes = LM[net]
        x = (torch.randint(0, vocab, (batch, seq)),) + ((torch.randint(0, ntypes, (batch, seq)),) if ntypes else ())
        return x, ["input_ids", "token_type_ids"][:len(x)], ["hidden"]
    x = torch.randn(batch, 100, CONF[net][1]) if net in CONF else \
        torch.randn(batch, ENC[net][2], ENC[net][0]) if net in ENC else \
        torch.randn(50, batch, 64) if net in RNN else torch.randn(batch, 3, side, side)
    return (x,), ["input"], ["logits"]


def model(net, batch):
    """a zoo model as the Python entry point takes it: the module (its weights drawn from seed 0), the example
    inputs (drawn after them), the input and output names"""
    import torch
    import torchvision as tv
    torch.manual_seed(0)
    m = build(tv, net)
    return (m,) + example(net, batch)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    missing = [z for z in ZOO if not os.path.exists(os.path.join(out, name_of(*z) + ".onnx"))]
    if missing:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                        "python"))
        import mncc
        for net, batch, opset in missing:
            m, x, names, onames = model(net, batch)
            path = os.path.join(out, name_of(net, batch, opset) + ".onnx")
            mncc.export_torch(m, x, path + ".tmp", opset, names, onames)  # as mncc.compile exports a module
            os.replace(path + ".tmp", path)
    for z in ZOO:
        print(name_of(*z))


if __name__ == "__main__":
    main()
